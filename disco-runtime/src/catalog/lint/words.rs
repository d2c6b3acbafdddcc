//! The words the rules read: a name's singular words, its normalised and compact forms, a
//! description's content words and word pairs, and which tools are neighbours.

use super::*;

/// Singular of one lower-case word: the resolver's own rule, so the lint sees names as the
/// spelling-equivalent tier does.
pub(super) fn singular(word: &str) -> String {
    crate::text::words::singular(word)
}

/// The words of a tool name or alias: split at separators and at lower-to-upper case changes
/// (`getUser` = `get_user`), singular.
pub(super) fn name_words(name: &str) -> Vec<String> {
    crate::text::words::split_words(name)
        .iter()
        .map(|w| singular(w))
        .collect()
}

/// A name as the spelling-equivalent tier sees it: its singular words in any order, whatever
/// the case and separators (`list_notes`, `ListNote` and `note-list` are one spelling).
pub(super) fn normalised(name: &str) -> String {
    let mut words = name_words(name);
    words.sort();
    words.join(" ")
}

/// The letters of a name without separators, singular, in order: what edit distance is
/// measured on.
pub(super) fn compact(name: &str) -> String {
    name_words(name).concat()
}

pub(super) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does", "each", "e", "eg",
    "for", "from", "g", "has", "have", "if", "in", "into", "is", "it", "its", "it's", "of", "on",
    "one", "or", "so", "such", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "to", "too", "was", "what", "when", "which", "who", "will", "with", "you", "your",
];

/// What the similarity rules compare.
pub(super) struct Text {
    /// Content words of the description (stop words dropped, singular).
    pub(super) content: BTreeSet<String>,
    /// Pairs of consecutive words of the description (w-shingles with w = 2), singular.
    pub(super) shingles: BTreeSet<String>,
    /// Words of 3+ letters of the tool's name, singular.
    pub(super) name_words: BTreeSet<String>,
}

pub(super) fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

impl Text {
    pub(super) fn of(tool: &CatalogTool) -> Text {
        let all: Vec<String> = plain_words(&tool.description)
            .iter()
            .map(|w| singular(w))
            .collect();
        let content = all
            .iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .cloned()
            .collect();
        let shingles = if all.len() < 2 {
            all.iter().cloned().collect()
        } else {
            all.windows(2).map(|w| w.join(" ")).collect()
        };
        let name_words = name_words(&tool.name)
            .into_iter()
            .filter(|w| w.len() >= 3)
            .collect();
        Text {
            content,
            shingles,
            name_words,
        }
    }

    /// Near-duplicate measure: Jaccard similarity of the word-pair shingles (Broder's
    /// w-shingling). Reworded text shares few pairs even when it shares many words.
    pub(super) fn resemblance(&self, other: &Text) -> f64 {
        jaccard(&self.shingles, &other.shingles)
    }

    /// Topic overlap: Jaccard similarity of the content-word sets.
    pub(super) fn overlap(&self, other: &Text) -> f64 {
        jaccard(&self.content, &other.content)
    }
}
