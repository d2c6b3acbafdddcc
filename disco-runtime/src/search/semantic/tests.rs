use super::*;

#[test]
fn word_models_average_and_normalise() {
    let m = word_model(
        &["<unk>", "sun", "moon"],
        &[&[0.0, 0.0], &[3.0, 0.0], &[0.0, 1.0]],
    );
    assert_eq!(m.embed("SUN"), Some(vec![1.0, 0.0]));
    // The mean of (3, 0) and (0, 1), at unit length: (3, 1) / sqrt(10).
    let both = m.embed("sun moon").unwrap();
    let r = 10f32.sqrt();
    assert!((both[0] - 3.0 / r).abs() < 1e-6 && (both[1] - 1.0 / r).abs() < 1e-6);
    assert_eq!(m.embed("   "), None);
    // Unknown words map to the unknown token, whose vector is zero: no direction.
    assert_eq!(m.embed("stars"), None);
    let texts: Vec<String> = (0..300)
        .map(|i| ["sun", "moon", "sun moon", "stars"][i % 4].to_string())
        .collect();
    let all = m.embed_all(&texts);
    assert_eq!(all.len(), texts.len());
    for (t, v) in texts.iter().zip(&all) {
        assert_eq!(v, &m.embed(t), "{t}");
    }
}

/// A byte-pair tokenizer shaped like Llama's (tests), over "a", "b" and "c", with `extra`
/// tokens and merges added.
fn llama_shaped(extra_vocab: &[&str], extra_merges: &[&str]) -> StaticModel {
    llama_shaped_with(extra_vocab, extra_merges, |_| {})
}

/// [`llama_shaped`], with `tweak` applied to the tokenizer's JSON.
fn llama_shaped_with(
    extra_vocab: &[&str],
    extra_merges: &[&str],
    tweak: impl Fn(&mut serde_json::Value),
) -> StaticModel {
    let mut tokens = vec![
        "<unk>",
        "<s>",
        "\u{2581}",
        "a",
        "b",
        "c",
        "\u{2581}a",
        "ab",
        "\u{2581}ab",
    ];
    tokens.push("\u{2581}\u{2581}");
    tokens.extend_from_slice(extra_vocab);
    let vocab: serde_json::Map<String, serde_json::Value> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), serde_json::json!(i)))
        .collect();
    // "▁▁" merges first, as in Llama's: a "▁" in the text next to a space would pair with it.
    let mut merges = vec!["\u{2581} \u{2581}", "\u{2581} a", "a b", "\u{2581}a b"];
    merges.extend_from_slice(extra_merges);
    let mut tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{"id": 1, "content": "<s>", "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u{2581}"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}
        ]},
        "pre_tokenizer": null,
        "post_processor": null,
        "decoder": null,
        "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
            "continuing_subword_prefix": null, "end_of_word_suffix": null,
            "fuse_unk": true, "byte_fallback": false, "ignore_merges": false,
            "vocab": vocab, "merges": merges}
    });
    tweak(&mut tokenizer);
    let data: Vec<u8> = (0..tokens.len())
        .flat_map(|i| [1.0 + i as f32, (i * i) as f32 / 7.0])
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let weights = tensor_file("F32", &[tokens.len(), 2], &data);
    StaticModel::from_bytes(&weights, tokenizer.to_string().as_bytes()).expect("a test model")
}

/// Every text of `texts`: its ids put together from its pieces are its ids tokenized
/// whole (or it is tokenized whole), and `embed_all` gives `embed`'s vectors, bit for bit.
fn pieces_agree_with_whole_texts(m: &StaticModel, texts: &[String]) -> usize {
    let mut pieces = Pieces::default();
    let mut by_pieces = 0;
    for t in texts {
        let whole = m.tokenizer.encode_fast(cut(t), false).unwrap();
        if let Some(ids) = m.piece_ids(cut(t), &mut pieces) {
            assert_eq!(ids, whole.get_ids(), "{t:?}");
            by_pieces += 1;
        }
    }
    for (t, v) in texts.iter().zip(m.embed_all(texts)) {
        assert_eq!(v, m.embed(t), "{t:?}");
    }
    by_pieces
}

#[test]
fn llama_shaped_tokenizers_tokenize_each_piece_once_with_the_same_ids() {
    let m = llama_shaped(&[], &[]);
    assert_eq!(m.pieces, Some(vec!["<s>".to_owned()]));
    let texts: Vec<String> = [
        "ab ab",
        "a  b",
        "  ab",
        "ab a b ab",
        "cab ab",
        "xx ab yy",
        "a\tb\nab",
        "ab",
        "a",
        "   ",
        "",
        "ab<s> ab",
        "ab ",
        "b  ab   a",
        "\u{2581}ab \u{2581} a",
        "a\u{2581} a",
        "c c",
        "a c",
        "x a",
        "a x a",
    ]
    .iter()
    .map(|t| t.to_string())
    .chain((0..200).map(|i| {
        let words = ["ab", "a", "b", "cab", "x", "ba", "  a", "\u{2581}b"];
        (0..1 + i % 7)
            .map(|j| words[(i * 3 + j * 5) % words.len()])
            .collect::<Vec<_>>()
            .join(if i % 3 == 0 { "  " } else { " " })
    }))
    .collect();
    let by_pieces = pieces_agree_with_whole_texts(&m, &texts);
    // Texts ending in a space or holding "<s>" or a "\u{2581}" are tokenized whole; the rest
    // by pieces.
    assert!(by_pieces > 100, "{by_pieces}");

    // A token joining a character to a following "\u{2581}" could span two pieces: then
    // every text is tokenized whole.
    assert_eq!(llama_shaped(&["b\u{2581}"], &["b \u{2581}"]).pieces, None);
    let joined = llama_shaped(&["b\u{2581}", "b\u{2581}a"], &["b \u{2581}", "b\u{2581} a"]);
    assert_eq!(joined.pieces, None);
    assert_eq!(pieces_agree_with_whole_texts(&joined, &texts), 0);
    // A token found whole before any merge ("▁c", which no merge makes) or a character
    // dropped for want of an unknown token would break the pieces apart: whole texts.
    let whole = llama_shaped_with(&["\u{2581}c"], &[], |t| {
        t["model"]["ignore_merges"] = serde_json::json!(true)
    });
    assert_eq!(whole.pieces, None);
    assert_eq!(pieces_agree_with_whole_texts(&whole, &texts), 0);
    let dropping = llama_shaped_with(&[], &[], |t| {
        t["model"]["unk_token"] = serde_json::Value::Null
    });
    assert_eq!(dropping.pieces, None);
    assert_eq!(pieces_agree_with_whole_texts(&dropping, &texts), 0);
    // The word-level test models split before tokenizing: whole texts too.
    assert_eq!(static_word_model(&["<unk>"], &[&[1.0]]).pieces, None);
}

#[test]
fn tokenizers_larger_than_the_table_are_refused() {
    let data: Vec<u8> = [1.0f32, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let weights = tensor_file("F32", &[1, 2], &data);
    let tokenizer = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
        "normalizer":null,"pre_tokenizer":{"type":"Whitespace"},"post_processor":null,
        "decoder":null,"model":{"type":"WordLevel","vocab":{"a":0,"b":1},"unk_token":"a"}}"#;
    let err = StaticModel::from_bytes(&weights, tokenizer.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("token id 1"), "{err}");
    // Sparse ids: two tokens, but one of them past the table.
    let sparse = tokenizer.replace(r#""b":1"#, r#""b":5"#);
    let data: Vec<u8> = [1.0f32, 0.0, 0.0, 1.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let two = tensor_file("F32", &[2, 2], &data);
    let err = StaticModel::from_bytes(&two, sparse.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("token id 5"), "{err}");
    // Padding in the tokenizer file is switched off: a text is its own tokens only.
    let padded = tokenizer.replace(
        r#""padding":null"#,
        r#""padding":{"strategy":{"Fixed":4},"direction":"Right","pad_to_multiple_of":null,"pad_id":1,"pad_type_id":0,"pad_token":"b"}"#,
    );
    let m = StaticModel::from_bytes(&two, padded.as_bytes()).expect("padding is dropped");
    assert_eq!(m.embed("a"), Some(vec![1.0, 0.0]));
    let err = StaticModel::from_bytes(&weights, b"{").unwrap_err();
    assert!(
        err.to_string().contains("cannot load the tokenizer"),
        "{err}"
    );
}

#[test]
fn tables_are_read_in_each_float_type_and_refused_with_reasons() {
    let f32s: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let (table, vocab, dim) = read_table(&tensor_file("F32", &[3, 2], &f32s)).unwrap();
    assert_eq!((vocab, dim), (3, 2));
    assert_eq!(table, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let f16s: Vec<u8> = [1.0f32, -0.5]
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let (table, _, _) = read_table(&tensor_file("F16", &[1, 2], &f16s)).unwrap();
    assert_eq!(table, vec![1.0, -0.5]);
    let bf16s: Vec<u8> = [2.0f32, 0.25]
        .iter()
        .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
        .collect();
    let (table, _, _) = read_table(&tensor_file("BF16", &[2, 1], &bf16s)).unwrap();
    assert_eq!(table, vec![2.0, 0.25]);

    let flat = read_table(&tensor_file("F32", &[6], &f32s)).unwrap_err();
    assert!(flat.contains("vocabulary x dimensions"), "{flat}");
    let ints = read_table(&tensor_file("I32", &[3, 2], &f32s[..24])).unwrap_err();
    assert!(ints.contains("want f32"), "{ints}");
    let nan: Vec<u8> = [f32::NAN, 1.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let bad = read_table(&tensor_file("F32", &[1, 2], &nan)).unwrap_err();
    assert!(bad.contains("not finite"), "{bad}");
    assert!(read_table(b"not a tensor file").is_err());
}

/// With the model the evaluation uses (`DISCO_SEMANTIC_MODEL`: its directory; `.ci/test`
/// unpacks it), vectors agree with WordLlama's own implementation (`wl.embed(text,
/// norm=True)`, wordllama 0.4.0.post1) to 1e-5.
#[test]
fn the_evaluation_model_embeds_as_its_reference_does() {
    let Some(dir) = std::env::var_os("DISCO_SEMANTIC_MODEL") else {
        eprintln!("DISCO_SEMANTIC_MODEL is not set: the reference comparison is skipped");
        return;
    };
    let model = StaticModel::load(&dir).expect("the evaluation model loads");
    assert_eq!(model.dim(), 256);
    let cases: [(&str, [f32; 4]); 3] = [
        (
            "horoscope for today",
            [0.060648, -0.164028, 0.042621, 0.032687],
        ),
        (
            "Povides strology services for you.",
            [0.0438, 0.042803, 0.154818, -0.057175],
        ),
        (
            "What are the current crypto metrics?",
            [0.048912, 0.078978, -0.037489, -0.020831],
        ),
    ];
    let mut vectors = Vec::new();
    for (text, head) in cases {
        let v = model.embed(text).expect("words have tokens");
        for (got, want) in v.iter().zip(head) {
            assert!(
                (got - want).abs() < 1e-5,
                "{text}: {:?} vs {head:?}",
                &v[..4]
            );
        }
        vectors.push(v);
    }
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!((cos(&vectors[0], &vectors[1]) - 0.159_718_5).abs() < 1e-5);
    assert_eq!(model.embed(""), None);

    // Its tokenizer is Llama's: texts are tokenized by pieces, to the same ids.
    assert!(model.pieces.is_some());
    let words = [
        "Search",
        "the",
        "web.",
        "get_weather",
        "Café",
        "naïve",
        "日本語",
        "🙂",
        "<s>",
        "</s>",
        "  ",
        "\t",
        "\n",
        "e-mail",
        "ISBN:",
        "x",
        "(optional)",
        "HTTP/2",
        "",
    ];
    let texts: Vec<String> = (0..3000)
        .map(|i| {
            (0..1 + i % 13)
                .map(|j| words[(i * 7 + j * 11 + j * j) % words.len()])
                .collect::<Vec<_>>()
                .join(if i % 5 == 0 { "  " } else { " " })
        })
        .collect();
    let by_pieces = pieces_agree_with_whole_texts(&model, &texts);
    assert!(by_pieces > 1000, "{by_pieces}");
}

#[test]
fn directories_must_hold_one_model() {
    let dir = std::env::temp_dir().join(format!("disco-semantic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = SemanticModel::load(&dir).unwrap_err().to_string();
    assert!(err.contains("no `*.safetensors` file"), "{err}");
    std::fs::write(dir.join("a.safetensors"), b"x").unwrap();
    let err = SemanticModel::load(&dir).unwrap_err().to_string();
    assert!(err.contains("no tokenizer file"), "{err}");
    std::fs::write(dir.join("b.safetensors"), b"x").unwrap();
    std::fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
    let err = SemanticModel::load(&dir).unwrap_err().to_string();
    assert!(err.contains("2 `*.safetensors` files"), "{err}");
    std::fs::remove_file(dir.join("b.safetensors")).unwrap();
    let err = SemanticModel::load(&dir).unwrap_err().to_string();
    assert!(err.contains("tokenizer"), "{err}");
    let missing = SemanticModel::load(dir.join("nope"))
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("cannot read the model directory"),
        "{missing}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
