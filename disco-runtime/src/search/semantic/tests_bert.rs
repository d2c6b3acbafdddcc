//! BERT-family encoders: a tiny BERT written by the test (random weights) in the
//! sentence-transformers layout, every way a directory can be wrong, and the real model when
//! its directory is given.

use super::*;
use serde_json::json;
use std::path::PathBuf;

const WORDS: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "weather", "forecast", "rain", "tomorrow", "in",
    "paris", "convert", "currency", "money", "send", "an", "email", "to", "a", "friend", "read",
    "file", "##s", "will", "it",
];
const HIDDEN: usize = 8;
const LAYERS: usize = 2;
const INTER: usize = 16;
const POSITIONS: usize = 32;

/// A deterministic stream of small numbers.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.8
    }
}

fn config() -> serde_json::Value {
    json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": WORDS.len(),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute"
    })
}

fn tokenizer() -> serde_json::Value {
    let vocab: serde_json::Map<String, serde_json::Value> = WORDS
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), json!(i)))
        .collect();
    let special = |id: usize, content: &str| {
        json!({"id": id, "content": content, "single_word": false, "lstrip": false,
               "rstrip": false, "normalized": false, "special": true})
    };
    json!({
        "version": "1.0",
        "truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": null,
                    "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": [special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"),
                         special(3, "[SEP]")],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": null,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab}
    })
}

/// The tensors of a BERT of [`config`], random, by name with their shapes.
fn tensors(seed: u64) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let mut n = Numbers(seed);
    let mut out = Vec::new();
    let mut put = |name: String, shape: Vec<usize>, n: &mut Numbers| {
        let len = shape.iter().product();
        let data = if name.ends_with("LayerNorm.weight") {
            vec![1.0; len]
        } else {
            (0..len).map(|_| n.next()).collect()
        };
        out.push((name, shape, data));
    };
    put(
        "embeddings.word_embeddings.weight".into(),
        vec![WORDS.len(), HIDDEN],
        &mut n,
    );
    put(
        "embeddings.position_embeddings.weight".into(),
        vec![POSITIONS, HIDDEN],
        &mut n,
    );
    put(
        "embeddings.token_type_embeddings.weight".into(),
        vec![2, HIDDEN],
        &mut n,
    );
    put("embeddings.LayerNorm.weight".into(), vec![HIDDEN], &mut n);
    put("embeddings.LayerNorm.bias".into(), vec![HIDDEN], &mut n);
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}.");
        for part in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ] {
            put(format!("{p}{part}.weight"), vec![HIDDEN, HIDDEN], &mut n);
            put(format!("{p}{part}.bias"), vec![HIDDEN], &mut n);
        }
        put(
            format!("{p}attention.output.LayerNorm.weight"),
            vec![HIDDEN],
            &mut n,
        );
        put(
            format!("{p}attention.output.LayerNorm.bias"),
            vec![HIDDEN],
            &mut n,
        );
        put(
            format!("{p}intermediate.dense.weight"),
            vec![INTER, HIDDEN],
            &mut n,
        );
        put(format!("{p}intermediate.dense.bias"), vec![INTER], &mut n);
        put(
            format!("{p}output.dense.weight"),
            vec![HIDDEN, INTER],
            &mut n,
        );
        put(format!("{p}output.dense.bias"), vec![HIDDEN], &mut n);
        put(format!("{p}output.LayerNorm.weight"), vec![HIDDEN], &mut n);
        put(format!("{p}output.LayerNorm.bias"), vec![HIDDEN], &mut n);
    }
    out
}

fn safetensors_of(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, shape, data)| {
            let b = data.iter().flat_map(|x| x.to_le_bytes()).collect();
            (name.clone(), shape.clone(), b)
        })
        .collect();
    let views = bytes.iter().map(|(name, shape, b)| {
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), b)
            .expect("a valid tensor");
        (name.clone(), view)
    });
    safetensors::tensor::serialize(views, None).expect("serializable")
}

/// A directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("disco-bert-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny BERT in `dir`, pooling by `pooling` ("mean" or "cls").
fn write_model(dir: &Path, pooling: &str, seed: u64) {
    std::fs::write(dir.join("config.json"), config().to_string()).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer().to_string()).unwrap();
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors_of(&tensors(seed)),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    let pool = json!({
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean",
        "pooling_mode_max_tokens": false,
        "pooling_mode_mean_sqrt_len_tokens": false
    });
    std::fs::write(dir.join("1_Pooling/config.json"), pool.to_string()).unwrap();
    let modules = json!([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
    ]);
    std::fs::write(dir.join("modules.json"), modules.to_string()).unwrap();
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        json!({"max_seq_length": 16, "do_lower_case": false}).to_string(),
    )
    .unwrap();
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const TEXTS: &[&str] = &[
    "the weather forecast",
    "will it rain tomorrow in paris",
    "convert currency",
    "send an email to a friend",
    "read files",
    "Money",
    "the weather forecast will it rain tomorrow in paris convert currency send an email to a \
     friend read the file",
];

#[test]
fn a_tiny_bert_loads_and_embeds_the_same_alone_as_in_a_padded_batch() {
    for pooling in ["mean", "cls"] {
        let dir = scratch(&format!("ok-{pooling}"));
        write_model(&dir, pooling, 7);
        let m = SemanticModel::load(&dir).expect("the tiny BERT loads");
        assert_eq!((m.kind(), m.dim()), ("bert", HIDDEN));
        assert!(m.approx_heap_bytes() > WORDS.len() * HIDDEN * 4);
        let alone: Vec<Vec<f32>> = TEXTS.iter().map(|t| m.embed(t).expect("words")).collect();
        for v in &alone {
            assert!((cos(v, v) - 1.0).abs() < 1e-5, "unit length: {v:?}");
        }
        // Batched (sorted by length, padded, masked): the same vectors.
        let texts: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
        let batch = m.embed_all(&texts);
        for ((t, a), b) in TEXTS.iter().zip(&alone).zip(&batch) {
            let b = b.as_ref().expect("words");
            assert!(cos(a, b) > 1.0 - 1e-5, "{pooling} {t}: {a:?} vs {b:?}");
        }
        // Texts differ, and a text longer than max_seq_length (16) is cut, not refused.
        assert!(cos(&alone[0], &alone[2]) < 0.9999);
        // No token of the text: no vector (the special tokens alone are not a text).
        assert_eq!(m.embed(""), None);
        assert_eq!(m.embed("   "), None);
        assert_eq!(m.embed_all(&["".into(), "rain".into()])[0], None);
        // Unknown words are [UNK], and a text of them has a vector.
        assert!(m.embed("zzz qqq").is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn mean_and_cls_pooling_differ_and_the_id_follows_the_bytes() {
    let (a, b, c) = (scratch("id-a"), scratch("id-b"), scratch("id-c"));
    write_model(&a, "mean", 7);
    write_model(&b, "cls", 7);
    write_model(&c, "mean", 8);
    let (ma, mb, mc) = (
        SemanticModel::load(&a).unwrap(),
        SemanticModel::load(&b).unwrap(),
        SemanticModel::load(&c).unwrap(),
    );
    let t = "will it rain tomorrow in paris";
    assert!(cos(&ma.embed(t).unwrap(), &mb.embed(t).unwrap()) < 0.9999);
    assert!(cos(&ma.embed(t).unwrap(), &mc.embed(t).unwrap()) < 0.9999);
    let ids = [ma.id(), mb.id(), mc.id()];
    assert!(
        ids[0] != ids[1] && ids[0] != ids[2] && ids[1] != ids[2],
        "{ids:?}"
    );
    assert_eq!(SemanticModel::load(&a).unwrap().id(), ma.id());
    for d in [a, b, c] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// Every piece a directory can lack or hold wrong: an error that says what, never a panic.
#[test]
fn bad_transformer_directories_are_refused_with_reasons() {
    let dir = scratch("bad");
    type Breaker = Box<dyn Fn(&Path)>;
    let write = |name: &'static str, text: String| -> Breaker {
        Box::new(move |d: &Path| std::fs::write(d.join(name), &text).unwrap())
    };
    let remove = |name: &'static str| -> Breaker {
        Box::new(move |d: &Path| std::fs::remove_file(d.join(name)).unwrap())
    };
    let pooling = |key: &str, also_mean: bool| {
        json!({"word_embedding_dimension": HIDDEN, key: true, "pooling_mode_mean_tokens": also_mean})
            .to_string()
    };
    let with = |key: &str, value: serde_json::Value| {
        let mut c = config();
        c[key] = value;
        c.to_string()
    };
    let weights_without = |drop: &'static str| -> Breaker {
        Box::new(move |d: &Path| {
            let t: Vec<_> = tensors(7).into_iter().filter(|t| t.0 != drop).collect();
            std::fs::write(d.join("model.safetensors"), safetensors_of(&t)).unwrap()
        })
    };
    let cases: Vec<(Breaker, &str)> = vec![
        (remove("tokenizer.json"), "tokenizer.json"),
        (remove("model.safetensors"), "model.safetensors"),
        (remove("1_Pooling/config.json"), "1_Pooling/config.json"),
        (write("config.json", "{".into()), "config.json is not JSON"),
        (
            write("config.json", with("model_type", json!("roberta"))),
            "\"roberta\" is not supported",
        ),
        (
            write("config.json", {
                let mut c = config();
                c.as_object_mut().unwrap().remove("model_type");
                c["architectures"] = json!(["T5Model"]);
                c.to_string()
            }),
            "not a BERT",
        ),
        (
            write("config.json", with("hidden_act", json!("swish"))),
            "not a BERT config",
        ),
        (
            write(
                "config.json",
                with("position_embedding_type", json!("relative_key")),
            ),
            "relative_key",
        ),
        (
            write("config.json", with("num_attention_heads", json!(3))),
            "multiple",
        ),
        (
            write("config.json", with("vocab_size", json!(10))),
            "token id",
        ),
        (
            write("config.json", with("hidden_size", json!(12))),
            "dimensions",
        ),
        (
            write(
                "1_Pooling/config.json",
                pooling("pooling_mode_max_tokens", false),
            ),
            "max_tokens",
        ),
        (
            write(
                "1_Pooling/config.json",
                pooling("pooling_mode_cls_token", true),
            ),
            "at once",
        ),
        (
            write("1_Pooling/config.json", json!({}).to_string()),
            "no pooling mode",
        ),
        (
            write("1_Pooling/config.json", "[]".into()),
            "not a JSON object",
        ),
        (
            write(
                "modules.json",
                json!([{"path": "", "type": "sentence_transformers.models.Transformer"},
                       {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                       {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])
                .to_string(),
            ),
            "Dense",
        ),
        (
            write(
                "modules.json",
                json!([{"path": "../elsewhere", "type": "sentence_transformers.models.Pooling"}])
                    .to_string(),
            ),
            "refused",
        ),
        (write("modules.json", "{}".into()), "not a list"),
        (write("tokenizer.json", "{}".into()), "tokenizer.json"),
        (
            write("model.safetensors", "not weights".into()),
            "model.safetensors",
        ),
        (
            weights_without("encoder.layer.1.output.dense.weight"),
            "model.safetensors",
        ),
        (
            weights_without("embeddings.word_embeddings.weight"),
            "model.safetensors",
        ),
        (
            write("sentence_bert_config.json", "[".into()),
            "sentence_bert_config.json",
        ),
    ];
    for (break_it, says) in cases {
        write_model(&dir, "mean", 7);
        break_it(&dir);
        let err = SemanticModel::load(&dir).expect_err(says).to_string();
        assert!(err.contains(says), "{says:?} not in {err:?}");
    }
    // Weights of the wrong shape.
    write_model(&dir, "mean", 7);
    let mut t = tensors(7);
    t[0].1 = vec![WORDS.len(), HIDDEN / 2];
    t[0].2.truncate(WORDS.len() * HIDDEN / 2);
    std::fs::write(dir.join("model.safetensors"), safetensors_of(&t)).unwrap();
    let err = SemanticModel::load(&dir).unwrap_err().to_string();
    assert!(err.contains("model.safetensors"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With the real model (`DISCO_SEMANTIC_TRANSFORMER_MODEL`: all-MiniLM-L6-v2's directory,
/// which `.ci/run` unpacks), sentences rank by meaning.
#[test]
fn the_transformer_model_ranks_sentences_by_meaning() {
    let Some(dir) = std::env::var_os("DISCO_SEMANTIC_TRANSFORMER_MODEL") else {
        eprintln!("DISCO_SEMANTIC_TRANSFORMER_MODEL is not set: the real-model test is skipped");
        return;
    };
    let m = SemanticModel::load(&dir).expect("the transformer model loads");
    assert_eq!((m.kind(), m.dim()), ("bert", 384));
    let e = |t: &str| m.embed(t).expect("a vector");
    let cases = [
        (
            "will it rain in Paris tomorrow",
            "Get the weather forecast for a city",
            "Convert an amount between currencies",
        ),
        (
            "my horoscope for today",
            "Provides astrology services",
            "Send an email message",
        ),
        (
            "how much is 20 dollars in euros",
            "Convert an amount between currencies",
            "Get the weather forecast for a city",
        ),
        (
            "delete the old backup files",
            "Remove a file from the disk",
            "Create a calendar event",
        ),
    ];
    for (query, near, far) in cases {
        let (q, n, f) = (e(query), e(near), e(far));
        assert!(
            cos(&q, &n) > cos(&q, &f) + 0.1,
            "{query}: {} vs {}",
            cos(&q, &n),
            cos(&q, &f)
        );
    }
    let texts: Vec<String> = cases
        .iter()
        .flat_map(|c| [c.0, c.1, c.2])
        .map(String::from)
        .collect();
    for (t, v) in texts.iter().zip(m.embed_all(&texts)) {
        assert!(cos(&e(t), &v.unwrap()) > 1.0 - 1e-4, "{t}");
    }
}
