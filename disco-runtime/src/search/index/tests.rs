use std::collections::HashSet;

use super::analyze::{split_compound, stem_word, truncate_chars, words_into};
use super::vocab::{GENERIC, STOPWORDS};
use super::*;
use crate::text::edits::within_one_edit;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.to_owned(),
        description: description.to_owned(),
        ..SearchDoc::default()
    }
}

fn catalog() -> Vec<SearchDoc> {
    vec![
        doc("create_issue", "Open a new issue in a repository."),
        doc(
            "delete_issue",
            "Remove an issue from a repository permanently.",
        ),
        doc(
            "list_issues",
            "List the issues of a repository, newest first.",
        ),
        doc(
            "getWeatherForecast",
            "Weather forecast for a city for the next days.",
        ),
        doc(
            "send-email",
            "Send an email message to one or more recipients.",
        ),
        doc("files.read", "Read the contents of a text file from disk."),
        SearchDoc {
            name: "search_papers".into(),
            title: Some("Search papers".into()),
            description: "Search my knowledge base for papers and notes by meaning.".into(),
            keywords: vec!["knowledge base".into(), "notes".into()],
            aliases: vec!["search_knowledgebase".into()],
            params: vec![("query".into(), "what to look for".into())],
        },
        doc(
            "airqualityforecast",
            "Two-day air quality outlook for any zip code.",
        ),
    ]
}

fn names(idx: &SearchIndex, docs: &[SearchDoc], q: &str) -> Vec<String> {
    idx.search(q, 5, &|_| true)
        .into_iter()
        .map(|h| docs[h.index].name.clone())
        .collect()
}

fn top(idx: &SearchIndex, docs: &[SearchDoc], q: &str) -> Option<String> {
    names(idx, docs, q).into_iter().next()
}

#[test]
fn index_is_shareable_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<SearchIndex>();
}

#[test]
fn word_lists_are_sorted_and_lowercase() {
    for list in [STOPWORDS, GENERIC] {
        assert!(list.windows(2).all(|w| w[0] < w[1]));
        assert!(list
            .iter()
            .all(|w| w.chars().all(|c| c.is_ascii_lowercase())));
    }
}

#[test]
fn splits_identifiers_into_words() {
    let mut out = Vec::new();
    words_into(
        "getUserName snake_case kebab-case a.b.c HTTPServer base64 mp3Player",
        &mut out,
    );
    assert_eq!(
        out,
        [
            "get", "user", "name", "snake", "case", "kebab", "case", "b", "c", "http", "server",
            "base64", "mp3", "player"
        ]
    );
}

#[test]
fn joins_phrases_and_drops_stopwords() {
    let mut out = Vec::new();
    words_into("Can you look up the weather and log in?", &mut out);
    assert_eq!(out, ["lookup", "weather", "login"]);
}

#[test]
fn name_words_rank_first() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "delete issue").as_deref(),
        Some("delete_issue")
    );
    assert_eq!(
        top(&idx, &docs, "weather forecast").as_deref(),
        Some("getWeatherForecast")
    );
    assert_eq!(top(&idx, &docs, "read file").as_deref(), Some("files.read"));
}

#[test]
fn name_bonus_needs_distinctive_words_each_counted_once() {
    let docs = vec![
        doc(
            "help_finding",
            "Help finding. Locate the closest sushi restaurant.",
        ),
        doc("ResearchFinder", "Tool for searching academic papers."),
        doc(
            "calc_paper",
            "Calc paper. Retrieve the moves a Pokemon can learn.",
        ),
        doc("get_weather", "Current weather for a city."),
        doc("send_email", "Send an email to a recipient."),
    ];
    let idx = SearchIndex::build(&docs);
    // "help" and "find" are generic: together they name `help_finding` but say nothing.
    assert_eq!(
        top(&idx, &docs, "Can you help me find academic papers?").as_deref(),
        Some("ResearchFinder")
    );
    // "academic" (a synonym of paper) and "papers" cover the one word `paper` once.
    assert_eq!(
        top(&idx, &docs, "Search academic papers").as_deref(),
        Some("ResearchFinder")
    );
}

#[test]
fn a_distinctive_word_claims_a_shared_synonym() {
    let docs = vec![
        doc("search_records", "Search the records of the archive."),
        doc("delete_records", "Delete records from the archive."),
    ];
    let idx = SearchIndex::build(&docs);
    let search = idx.terms[&stem_word(&idx.stemmer, "search")];
    // "find" (generic) and "locate" both stand for "search" at the synonym weight:
    // "locate" claims it for the name bonus, whichever comes first.
    for q in ["find locate", "locate find"] {
        let words = idx.query_words(q);
        let claimants: Vec<f32> = words
            .iter()
            .filter(|w| {
                w.variants
                    .iter()
                    .zip(&w.claims)
                    .any(|(v, &c)| v.0 == search && c)
            })
            .map(|w| w.weight)
            .collect();
        assert_eq!(claimants, [1.0], "{q}");
    }
}

#[test]
fn long_queries_get_a_smaller_name_bonus() {
    let docs = vec![
        doc("list_servers", "Servers of the account."),
        doc("reboot_server", "Restart one server."),
        doc(
            "weather",
            "Weather forecast for a city, tomorrow and today.",
        ),
        doc("email", "Send email messages to recipients."),
        doc("calendar", "Meetings in the calendar this week."),
    ];
    let with = SearchIndex::build(&docs);
    let without = SearchIndex::build(&docs).with_ranking(Ranking {
        name_coverage: 0.0,
        ..Ranking::default()
    });
    let bonus = |q: &str| {
        let score = |idx: &SearchIndex| {
            idx.search(q, 5, &|_| true)
                .into_iter()
                .find(|h| h.index == 0)
                .map(|h| h.score)
                .unwrap_or(0.0)
        };
        score(&with) - score(&without)
    };
    let short = bonus("list servers");
    let long = bonus("list servers weather forecast email recipients calendar meetings");
    assert!(short > 0.0, "{short}");
    assert!(long > 0.0 && long < short, "{long} vs {short}");
}

#[test]
fn stemming_matches_inflections() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "emails sending").as_deref(),
        Some("send-email")
    );
    assert_eq!(
        top(&idx, &docs, "deleting issues").as_deref(),
        Some("delete_issue")
    );
}

#[test]
fn synonyms_match_at_a_discount() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "erase an issue").as_deref(),
        Some("delete_issue")
    );
    assert_eq!(
        top(&idx, &docs, "make a new issue").as_deref(),
        Some("create_issue")
    );
    assert_eq!(
        top(&idx, &docs, "look up papers").as_deref(),
        Some("search_papers")
    );
    // The author's own word beats a synonym.
    let a = idx.search("remove issue", 5, &|_| true);
    assert_eq!(docs[a[0].index].name, "delete_issue");
}

#[test]
fn typos_are_tolerated_for_unknown_words() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "wether forcast").as_deref(),
        Some("getWeatherForecast")
    );
    assert_eq!(
        top(&idx, &docs, "newset isues").as_deref(),
        Some("list_issues")
    );
    // A transposition: every repository tool, none other.
    let open = SearchIndex::build(&docs).with_threshold(0.0);
    let hits = open.search("repsoitory", 5, &|_| true);
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| docs[h.index].name.contains("issue")));
}

#[test]
fn within_one_edit_cases() {
    assert!(within_one_edit(b"search", b"search"));
    assert!(within_one_edit(b"search", b"serch"));
    assert!(within_one_edit(b"search", b"seaarch"));
    assert!(within_one_edit(b"search", b"saerch"));
    assert!(within_one_edit(b"search", b"searcx"));
    assert!(!within_one_edit(b"search", b"sraech"));
    assert!(!within_one_edit(b"search", b"sear"));
    assert!(within_one_edit(b"", b"a"));
}

#[test]
fn run_together_names_are_split() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "air quality").as_deref(),
        Some("airqualityforecast")
    );
    let mut out = Vec::new();
    let vocab: HashSet<String> = ["air", "quality", "forecast"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    split_compound("airqualityforecast", &vocab, &mut out);
    assert_eq!(out, ["air", "quality", "forecast"]);
    out.clear();
    split_compound("forecast", &vocab, &mut out);
    assert!(out.is_empty(), "a known word is not split: {out:?}");
}

#[test]
fn keywords_aliases_and_params_count() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert_eq!(
        top(&idx, &docs, "knowledgebase").as_deref(),
        Some("search_papers")
    );
    assert_eq!(top(&idx, &docs, "notes").as_deref(), Some("search_papers"));
}

#[test]
fn empty_query_lists_allowed_tools_in_name_order() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    let hits = idx.search("   \t\n", 100, &|i| i != 0);
    let got: Vec<&str> = hits.iter().map(|h| docs[h.index].name.as_str()).collect();
    let mut want: Vec<&str> = docs[1..].iter().map(|d| d.name.as_str()).collect();
    want.sort();
    assert_eq!(got, want);
    assert!(hits.iter().all(|h| h.score == 0.0));
    assert_eq!(idx.search("", 2, &|_| true).len(), 2);
}

#[test]
fn abstains_when_nothing_matches() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    assert!(idx
        .search("banana smoothie recipe", 5, &|_| true)
        .is_empty());
    assert!(idx.search("the of and", 5, &|_| true).is_empty());
    assert!(!idx.search("issue", 5, &|_| true).is_empty());
}

#[test]
fn threshold_abstains_on_the_best_hit() {
    let docs = catalog();
    let strict = SearchIndex::build(&docs).with_threshold(100.0);
    assert!(strict.search("delete issue", 5, &|_| true).is_empty());
    // A clear best match brings the weaker ones along.
    let best = SearchIndex::build(&docs).search("delete issue", 5, &|_| true)[0].score;
    let idx = SearchIndex::build(&docs).with_threshold(best * 0.99);
    let hits = idx.search("delete issue", 5, &|_| true);
    assert_eq!(docs[hits[0].index].name, "delete_issue");
    assert!(hits.len() >= 3 && hits[2].score < idx.threshold());
    let open = SearchIndex::build(&docs).with_threshold(0.0);
    assert!(open.search("delete issue", 5, &|_| true).len() >= 3);
    let nan = SearchIndex::build(&docs).with_threshold(f32::NAN);
    assert_eq!(nan.threshold(), DEFAULT_THRESHOLD);
}

#[test]
fn hidden_tools_do_not_change_visible_results() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs).with_threshold(0.0);
    // Hide every tool that mentions "issue" except one: scores of the rest must equal those
    // of an index built from the visible tools only.
    let hidden = [0usize, 2];
    let visible_docs: Vec<SearchDoc> = docs
        .iter()
        .enumerate()
        .filter(|(i, _)| !hidden.contains(i))
        .map(|(_, d)| d.clone())
        .collect();
    let alone = SearchIndex::build(&visible_docs).with_threshold(0.0);
    for q in [
        "delete issue",
        "repository",
        "send a message",
        "search notes",
        // Long: the words only hidden tools contain must not shrink the name bonus.
        "delete issue open new newest list first",
        "",
    ] {
        let a = idx.search(q, 10, &|i| !hidden.contains(&i));
        let b = alone.search(q, 10, &|_| true);
        let an: Vec<(&str, f32)> = a
            .iter()
            .map(|h| (docs[h.index].name.as_str(), h.score))
            .collect();
        let bn: Vec<(&str, f32)> = b
            .iter()
            .map(|h| (visible_docs[h.index].name.as_str(), h.score))
            .collect();
        assert_eq!(an.len(), bn.len(), "{q}");
        for (x, y) in an.iter().zip(&bn) {
            assert_eq!(x.0, y.0, "{q}");
            assert!((x.1 - y.1).abs() < 1e-5, "{q}: {x:?} vs {y:?}");
        }
        assert!(a.iter().all(|h| !hidden.contains(&h.index)));
    }
    assert!(idx.search("issue", 5, &|_| false).is_empty());
}

#[test]
fn ties_break_by_name() {
    let docs = vec![
        doc("b_tool", "same words"),
        doc("a_tool", "same words"),
        doc("c_tool", "same words"),
    ];
    let idx = SearchIndex::build(&docs).with_threshold(0.0);
    let got: Vec<usize> = idx
        .search("same words", 5, &|_| true)
        .iter()
        .map(|h| h.index)
        .collect();
    assert_eq!(got, [1, 0, 2]);
    let got: Vec<usize> = idx
        .search("same words", 2, &|_| true)
        .iter()
        .map(|h| h.index)
        .collect();
    assert_eq!(got, [1, 0]);
}

#[test]
fn results_are_capped_and_ordered() {
    let docs = catalog();
    let idx = SearchIndex::build(&docs).with_threshold(0.0);
    let hits = idx.search("issue repository", 2, &|_| true);
    assert_eq!(hits.len(), 2);
    assert!(hits[0].score >= hits[1].score);
    assert!(idx.search("issue", 0, &|_| true).is_empty());
}

#[test]
fn hostile_input_does_not_panic() {
    let docs = vec![
        doc("", ""),
        doc("ümlaut_tööl", "Ünïcödé déscription 東京 の 天気"),
        doc("\u{0}\u{1}ctl", "\u{7}\u{1b}[31m red \u{202e}"),
        doc(&"x".repeat(10_000), &"word ".repeat(100_000)),
        doc("A", "İ ß ﬁ"),
    ];
    let idx = SearchIndex::build(&docs);
    for q in [
        "",
        "\u{0}",
        "東京",
        "ümlaut",
        "İ",
        "ß",
        &"a".repeat(1_000_000),
        &"word ".repeat(10_000),
        "\u{202e}\u{1b}",
        "'''",
        "x y z 1 2 3",
    ] {
        let _ = idx.search(q, usize::MAX, &|_| true);
        let _ = idx.search(q, 3, &|i| i % 2 == 0);
    }
    assert_eq!(top(&idx, &docs, "ümlaut").as_deref(), Some("ümlaut_tööl"));
    let empty = SearchIndex::build(&[]);
    assert!(empty.is_empty());
    assert!(empty.search("x", 5, &|_| true).is_empty());
    assert!(empty.search("", 5, &|_| true).is_empty());
}

#[test]
fn long_queries_are_cut() {
    assert_eq!(truncate_chars("héllo", 2), "hé");
    assert_eq!(truncate_chars("hi", 10), "hi");
    let docs = catalog();
    let idx = SearchIndex::build(&docs);
    let q = format!("delete issue {}", "zzz ".repeat(10_000));
    assert_eq!(top(&idx, &docs, &q).as_deref(), Some("delete_issue"));
}

#[test]
fn deterministic_across_builds() {
    let docs = catalog();
    let a = SearchIndex::build(&docs);
    let b = SearchIndex::build(&docs);
    for q in ["issue", "send", "forecast wether", "papers notes"] {
        assert_eq!(a.search(q, 10, &|_| true), b.search(q, 10, &|_| true));
    }
    assert!(a.approx_heap_bytes() > 0);
    assert_eq!(a.len(), docs.len());
}

#[cfg(feature = "semantic")]
mod semantic {
    use super::*;
    use crate::search::index::fusion::SEMANTIC_THREAD_MIN_TOOLS;
    use std::sync::Arc;

    /// Three directions: the zodiac, money, the weather.
    fn model() -> Arc<crate::search::semantic::SemanticModel> {
        Arc::new(crate::search::semantic::word_model(
            &[
                "<unk>",
                "horoscope",
                "astrology",
                "currency",
                "money",
                "convert",
                "weather",
                "rain",
                "forecast",
            ],
            &[
                &[0.0, 0.0, 0.0],
                &[1.0, 0.1, 0.0],
                &[1.0, 0.0, 0.0],
                &[0.0, 1.0, 0.0],
                &[0.1, 1.0, 0.0],
                &[0.0, 1.0, 0.0],
                &[0.0, 0.0, 1.0],
                &[0.1, 0.0, 1.0],
                &[0.0, 0.1, 1.0],
            ],
        ))
    }

    fn docs() -> Vec<SearchDoc> {
        vec![
            doc("StrologyTool", "Provides astrology services"),
            doc("ExchangeTool", "Convert currency"),
            doc("get_weather", "Weather forecast for a city"),
        ]
    }

    #[test]
    fn a_query_that_shares_no_word_finds_its_tool_by_meaning() {
        let docs = docs();
        let plain = SearchIndex::build(&docs);
        assert!(plain.search("horoscope", 5, &|_| true).is_empty());
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let hits = idx.search("horoscope", 5, &|_| true);
        assert_eq!(hits.first().map(|h| h.index), Some(0), "{hits:?}");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        // First in both rankings scores 1.
        let both = idx.search("weather forecast", 5, &|_| true);
        assert_eq!(both[0].index, 2);
        assert!((both[0].score - 1.0).abs() < 1e-6, "{both:?}");
    }

    #[test]
    fn a_query_abstains_only_when_keywords_and_meaning_both_do() {
        let docs = docs();
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        // No keyword, but close to the weather tool in the model's space.
        let rain = idx.search("rain", 5, &|_| true);
        assert_eq!(rain.first().map(|h| h.index), Some(2), "{rain:?}");
        // Neither: no keyword, and no token the model knows.
        assert!(idx.search("zzyzx", 5, &|_| true).is_empty());
        let strict = SearchIndex::build(&docs)
            .with_ranking(Ranking {
                semantic_threshold: 2.0,
                ..Ranking::default()
            })
            .with_semantic(model(), &docs);
        assert!(strict.search("rain", 5, &|_| true).is_empty());
        // An empty query still lists the tools by name.
        assert_eq!(idx.search(" ", 5, &|_| true).len(), 3);
    }

    #[test]
    fn a_near_tie_in_meaning_leaves_the_keywords_to_decide() {
        // Both texts are close to "currency weather": one exactly (cosine 1), the other at
        // 3 / sqrt(10) = 0.95. The keywords clearly prefer the second (its name).
        let docs = vec![
            doc("daily_report", "Currency weather"),
            doc("currency_weather_feed", "Weather feed"),
        ];
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let hits = idx.search("currency weather", 5, &|_| true);
        assert_eq!(hits.first().map(|h| h.index), Some(1), "{hits:?}");
        let keywords = SearchIndex::build(&docs).search("currency weather", 5, &|_| true);
        assert_eq!(keywords.first().map(|h| h.index), Some(1), "{keywords:?}");
    }

    #[test]
    fn a_weak_keyword_match_is_not_counted_as_a_full_one() {
        // "tool" says a tool is wanted, not which: its one match must not tie with the
        // tool nearest in meaning (which would then lose on its name).
        let docs = vec![
            doc("tool_box", "A tool"),
            doc("weather_now", "Weather forecast for a city"),
        ];
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let hits = idx.search("rain tool", 5, &|_| true);
        assert_eq!(hits.first().map(|h| h.index), Some(1), "{hits:?}");
        assert!(hits[0].score > hits[1].score + 0.2, "{hits:?}");
    }

    #[test]
    fn the_fusions_floors_are_cleaned_and_every_score_stays_in_range() {
        let index = |r: Ranking, docs: &[SearchDoc]| {
            SearchIndex::build(docs)
                .with_ranking(r)
                .with_semantic(model(), docs)
        };
        // The score of tool `d` for `q`, if found.
        let score = |r: Ranking, docs: &[SearchDoc], q: &str, d: usize| {
            let hits = index(r, docs).search(q, 5, &|_| true);
            hits.iter().find(|h| h.index == d).map(|h| h.score)
        };
        // Two tools whose texts are the same but for the name tie in meaning.
        let mut docs = docs();
        docs.push(doc("get_forecast", "Weather forecast for a city"));
        let values = [
            f32::NAN,
            f32::NEG_INFINITY,
            -1.0,
            0.0,
            1e-9,
            0.2,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for (n, &a) in values.iter().enumerate() {
            let (b, c) = (
                values[(n * 4 + 1) % values.len()],
                values[(n * 7 + 2) % values.len()],
            );
            for (floor, spread, keyword) in [(a, b, c), (b, c, a), (c, a, b)] {
                let idx = index(
                    Ranking {
                        semantic_floor: floor,
                        semantic_spread_floor: spread,
                        keyword_scale_floor: keyword,
                        ..Ranking::default()
                    },
                    &docs,
                );
                // A keyword match is found under every setting, also alone.
                let alone = idx.search("weather forecast", 5, &|d| d == 2);
                assert_eq!(
                    alone.first().map(|h| h.index),
                    Some(2),
                    "{floor} / {spread} / {keyword}"
                );
                let r = idx.ranking();
                assert!(r.semantic_spread_floor >= 0.01 && r.semantic_spread_floor.is_finite());
                assert!(r.semantic_floor.is_finite() && r.keyword_scale_floor.is_finite());
                for q in [
                    "rain",
                    "weather forecast",
                    "forecast",
                    "money tool",
                    "horoscope",
                ] {
                    // All tools visible, and one alone: then the nearest is also the
                    // farthest, a spread of exactly 0.
                    let hits = idx.search(q, 5, &|_| true);
                    for h in hits.iter().chain(&idx.search(q, 5, &|d| d == 2)) {
                        assert!(
                            h.score.is_finite() && h.score > 0.0 && h.score <= 1.0 + 1e-6,
                            "{q:?} with floors {floor} / {spread} / {keyword}: {h:?}"
                        );
                    }
                }
            }
        }
        // Each floor has its effect. The spread: two texts at cosines 1 and 0.95 of the
        // query are 0.05 apart, a quarter of a unit over a floor of 0.2 and a sixteenth over
        // 0.8, so the farther one scores higher with the larger floor.
        let near = vec![
            doc("daily_report", "Currency weather"),
            doc("currency_weather_feed", "Weather feed"),
        ];
        let spread = |f: f32| Ranking {
            semantic_spread_floor: f,
            ..Ranking::default()
        };
        let tight = score(spread(0.2), &near, "currency weather", 1);
        let loose = score(spread(0.8), &near, "currency weather", 1);
        assert!(loose > tight, "{tight:?} {loose:?}");
        // The keyword scale: a weak match (one generic word) counts for less over a larger
        // floor.
        let weak = vec![
            doc("tool_box", "A tool"),
            doc("weather_now", "Weather forecast for a city"),
        ];
        let scale = |f: f32| Ranking {
            keyword_scale_floor: f,
            ..Ranking::default()
        };
        let one = score(scale(1.0), &weak, "rain tool", 0);
        let four = score(scale(4.0), &weak, "rain tool", 0);
        assert!(
            one.zip(four).is_some_and(|(a, b)| b < a),
            "{one:?} {four:?}"
        );
        // The floor for tools only the model finds: above every cosine, "rain" (no keyword)
        // finds nothing; at 0 it finds the weather tools.
        let high = index(
            Ranking {
                semantic_floor: 1.5,
                semantic_threshold: 0.0,
                ..Ranking::default()
            },
            &docs,
        );
        assert!(high.search("rain", 5, &|_| true).is_empty());
        let low = index(
            Ranking {
                semantic_floor: 0.0,
                ..Ranking::default()
            },
            &docs,
        );
        let found: Vec<usize> = low
            .search("rain", 5, &|_| true)
            .iter()
            .map(|h| h.index)
            .collect();
        assert!(
            found.starts_with(&[2, 3]) || found.starts_with(&[3, 2]),
            "{found:?}"
        );
    }

    #[test]
    fn building_both_at_once_gives_the_same_index() {
        // Enough tools for the vectors to be made on a thread of their own.
        let mut docs = docs();
        for i in 0..SEMANTIC_THREAD_MIN_TOOLS {
            docs.push(doc(
                &format!("tool_{i}"),
                ["money", "convert currency", "zzz"][i % 3],
            ));
        }
        let apart = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let m = apart.semantic.as_ref().unwrap().model.clone();
        let together = SearchIndex::build_with_semantic(&docs, m);
        let (a, t) = (
            apart.semantic.as_ref().unwrap(),
            together.semantic.as_ref().unwrap(),
        );
        assert_eq!((a.ready(), &a.texts), (t.ready(), &t.texts));
        for q in ["horoscope", "money", "rain", "weather forecast", ""] {
            assert_eq!(
                apart.search(q, 5, &|_| true),
                together.search(q, 5, &|_| true)
            );
        }
        // Docs that are not the index's own still give one vector per tool.
        let short = SearchIndex::build(&docs).with_semantic(m_of(&apart), &docs[..1]);
        assert_eq!(short.semantic.as_ref().unwrap().texts.len(), docs.len());
        let by_keywords = short.search("weather forecast", 5, &|_| true);
        assert_eq!(by_keywords.first().map(|h| h.index), Some(2));
        assert!(short.search("rain", 5, &|_| true).is_empty());
    }

    fn m_of(index: &SearchIndex) -> Arc<crate::search::semantic::SemanticModel> {
        index.semantic.as_ref().unwrap().model.clone()
    }

    #[test]
    fn tools_far_from_the_query_are_not_added_to_its_results() {
        let mut docs = docs();
        docs.push(doc("blank", "zzz qqq"));
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let hits = idx.search("weather forecast", 5, &|_| true);
        assert_eq!(
            hits.iter().map(|h| h.index).collect::<Vec<_>>(),
            [2],
            "{hits:?}"
        );
    }

    #[test]
    fn a_derived_index_reuses_the_vectors_of_the_tools_it_shares() {
        let base_docs = docs();
        let mut base = SearchIndex::build(&base_docs).with_semantic(model(), &base_docs);
        // Marks in the base's vectors show which ones were taken over.
        for name in ["StrologyTool", "ExchangeTool", "get_weather"] {
            base.semantic_vector_mut(name).unwrap().fill(0.5);
        }
        // A caller's own tool, and the shared ones in another order; one of them under its
        // old name but with a new text (a rebuilt catalog), which is embedded again.
        let mut docs = vec![doc("astro_daily", "Daily horoscope")];
        docs.extend(base_docs.iter().rev().cloned());
        docs[2].description = "Rain forecast".into();
        let m = m_of(&base);
        let mut reused =
            SearchIndex::build(&docs).with_semantic_reusing(m.clone(), &docs, Some(&base));
        let mut fresh = SearchIndex::build(&docs).with_semantic(m.clone(), &docs);
        for name in ["StrologyTool", "get_weather"] {
            assert!(reused
                .semantic_vector_mut(name)
                .unwrap()
                .iter()
                .all(|&v| v == 0.5));
        }
        for name in ["astro_daily", "ExchangeTool"] {
            let own = reused.semantic_vector_mut(name).unwrap().to_vec();
            assert_eq!(own, fresh.semantic_vector_mut(name).unwrap(), "{name}");
        }
        // Built at once, with the base: the same.
        let mut at_once = SearchIndex::build_with_semantic_reusing(
            &docs,
            m,
            Some(&base),
            &super::super::SemanticBuild::default(),
        );
        for name in ["StrologyTool", "get_weather", "astro_daily", "ExchangeTool"] {
            let a = at_once.semantic_vector_mut(name).unwrap().to_vec();
            assert_eq!(a, reused.semantic_vector_mut(name).unwrap(), "{name}");
        }
    }

    #[test]
    fn hidden_tools_change_no_visible_semantic_result() {
        let mut docs = docs();
        docs.push(doc("zodiac_secret", "Astrology horoscope readings"));
        let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
        let visible = |i: usize| i != 3;
        let seen = idx.search("horoscope money", 5, &visible);
        assert!(seen.iter().all(|h| h.index != 3));
        let alone = SearchIndex::build(&docs[..3]).with_semantic(model(), &docs[..3]);
        let expected = alone.search("horoscope money", 5, &|_| true);
        assert_eq!(seen, expected);
    }
}
