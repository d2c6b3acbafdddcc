//! The name index of one catalog: every spelling of every tool (`Form`) and the tables the
//! tiers look them up in, built once by `NameIndex::new`.

use super::cost::is_filler;
use super::deletions::DeletionTable;
use super::equivalent::bag_key;
use super::namespace::Namespaces;
use super::relation;
use super::typo::TypoNeighbours;
use super::NameEntry;
use super::MAX_NAME_LEN;
use crate::resolve::meaning::{rivals_of, RivalTable, Rivals, RivalsRef};
use crate::resolve::polarity::{fused_ids, inflected_ids, is_negation, typo_allowance, Polarity};
use crate::resolve::vocab::canon;
use crate::text::edits::each_char_deletion_hash;
use crate::text::hash::FastMap;
use crate::text::words::{char_len, singular, split_words};

/// Spelling key -> forms.
pub(super) type KeyMap = FastMap<Box<str>, Vec<u32>>;

/// One spelling of a tool: its name or one of its declared aliases.
pub(super) struct Form {
    pub(super) tool: usize,
    /// Lowercased words, as written.
    pub(super) raw: Vec<Box<str>>,
    /// Singular forms of `raw`.
    pub(super) stems: Vec<Box<str>>,
    /// `Polarity::of` each of `stems`.
    pub(super) stem_polarity: Box<[Polarity]>,
    /// `inflected_ids` of each word as written (`raw`: the singular of `yes` is no word).
    pub(super) raw_inflected: Box<[Option<Box<[u16]>>]>,
    /// Lowercase letters and digits only.
    pub(super) compact: Box<str>,
    /// `fused_ids(compact)`.
    pub(super) fused: Vec<u16>,
    /// Whether a word of `raw` is relational (`relation.rs`).
    pub(super) relational: bool,
    /// Bit `j` (for the first 64 words): `raw[j]` is a negation (`is_negation`), and
    /// `stems[j]` a filler (`cost::is_filler`): asked of every form scored, found once here.
    negations: u64,
    fillers: u64,
}

impl Form {
    /// Whether word `j` as written is a negation (`is_negation`).
    pub(super) fn is_negation(&self, j: usize) -> bool {
        match j {
            0..64 => self.negations >> j & 1 == 1,
            _ => self.raw.get(j).is_some_and(|w| is_negation(w)),
        }
    }

    /// Whether stem `j` is a filler word (`cost::is_filler`).
    pub(super) fn is_filler(&self, j: usize) -> bool {
        match j {
            0..64 => self.fillers >> j & 1 == 1,
            _ => self.stems.get(j).is_some_and(|w| is_filler(w)),
        }
    }
}

/// Bit `j` set for each of the first 64 `words` that pass `test`.
fn word_bits(words: &[Box<str>], test: fn(&str) -> bool) -> u64 {
    (words.iter().take(64).enumerate())
        .filter(|(_, w)| test(w))
        .fold(0, |bits, (j, _)| bits | 1 << j)
}

/// The name index of one catalog. Build once, resolve many times.
pub struct NameIndex {
    pub(super) tools: usize,
    pub(super) destructive: Vec<bool>,
    /// Lowercased tool names, to tell a change of case from a change of separators.
    pub(super) lower_names: Vec<Box<str>>,
    /// Tool -> its forms.
    pub(super) forms_of: Vec<Vec<u32>>,
    pub(super) exact: FastMap<Box<str>, Vec<usize>>,
    pub(super) alias: FastMap<Box<str>, Vec<usize>>,
    pub(super) forms: Vec<Form>,
    /// Spelling-equivalence keys -> forms.
    pub(super) by_compact: FastMap<Box<str>, Vec<u32>>,
    pub(super) by_stems: FastMap<Box<str>, Vec<u32>>,
    pub(super) by_bag: FastMap<Box<str>, Vec<u32>>,
    /// Word stem -> forms containing it.
    pub(super) postings: FastMap<Box<str>, Vec<u32>>,
    /// Synonym-class head -> stems of that class present in the catalog.
    pub(super) class_members: FastMap<&'static str, Vec<Box<str>>>,
    /// Every word as written and as stem, with its stem; the other tables number them.
    pub(super) spellings: Vec<(Box<str>, Box<str>)>,
    /// `Polarity::of` each spelling as written.
    pub(super) spelling_polarity: Vec<Polarity>,
    /// Spelling -> its number.
    pub(super) spelling_ids: FastMap<Box<str>, u32>,
    /// Per spelling: its rivals (`resolve/meaning.rs`), made here rather than on a request's
    /// first need in each thread.
    pub(super) rivals: Vec<Rivals>,
    /// Deletion neighbourhood of every spelling, by the deletion's hash
    /// (`each_char_deletion_hash`) -> spellings (symmetric-delete typo lookup). Hashes rather
    /// than strings: no string is made per deletion, at build or lookup, and the table is a
    /// fraction of the size; a spelling found through a colliding hash is measured like any
    /// other and dropped when it is not a typo. Both spellings are indexed because a plural
    /// may be irregular (`children` -> `child`) while the typo is made in the word as
    /// written (`chidlren`).
    pub(super) word_deletes: DeletionTable,
    /// Per spelling: what a lookup of it through `word_deletes` finds, in order. A request
    /// word the catalog knows (the common case) costs one lookup instead of one per deletion.
    pub(super) typo_neighbours: TypoNeighbours,
    /// One-deletion neighbourhood of compact forms, by hash as `word_deletes` -> forms, for
    /// requests that lost their word boundaries and contain a typo (`raedfile`).
    pub(super) compact_deletes: DeletionTable,
    /// The tools by the part of their names after a namespace (`namespace.rs`).
    pub(super) namespaces: Namespaces,
}

impl RivalTable for NameIndex {
    /// A word of the catalog has its rivals kept; another word (none is asked for today) has
    /// them made per thread.
    fn rivals(&self, word: &str) -> RivalsRef<'_> {
        let kept = self
            .spelling_ids
            .get(word)
            .and_then(|&id| self.rivals.get(id as usize));
        kept.map_or_else(|| RivalsRef::Made(rivals_of(word)), RivalsRef::Kept)
    }

    /// Kept for every word of the catalog.
    fn polarity(&self, word: &str) -> Polarity {
        let kept = self
            .spelling_ids
            .get(word)
            .and_then(|&id| self.spelling_polarity.get(id as usize));
        kept.copied().unwrap_or_else(|| Polarity::of(word))
    }
}

impl NameIndex {
    pub fn new<'a>(entries: impl IntoIterator<Item = NameEntry<'a>>) -> NameIndex {
        // The lexicon is read by the fuzzy tier: built with the index, not on a first typo.
        crate::text::lexicon::warm();
        crate::resolve::meaning::warm();
        let mut index = NameIndex::empty();
        let mut compact_deletes = Vec::new();
        for (tool, entry) in entries.into_iter().enumerate() {
            index.add_tool(tool, entry, &mut compact_deletes);
        }
        index.compact_deletes = DeletionTable::build(compact_deletes);
        index.add_synonym_classes();
        index.add_spellings();
        index.typo_neighbours = TypoNeighbours::of(&index);
        for members in index.class_members.values_mut() {
            members.sort();
        }
        index
    }

    fn empty() -> NameIndex {
        NameIndex {
            tools: 0,
            destructive: Vec::new(),
            lower_names: Vec::new(),
            forms_of: Vec::new(),
            exact: FastMap::default(),
            alias: FastMap::default(),
            forms: Vec::new(),
            by_compact: FastMap::default(),
            by_stems: FastMap::default(),
            by_bag: FastMap::default(),
            postings: FastMap::default(),
            class_members: FastMap::default(),
            spellings: Vec::new(),
            spelling_polarity: Vec::new(),
            spelling_ids: FastMap::default(),
            rivals: Vec::new(),
            word_deletes: DeletionTable::default(),
            typo_neighbours: TypoNeighbours::default(),
            compact_deletes: DeletionTable::default(),
            namespaces: Namespaces::default(),
        }
    }

    /// Tool number `tool`: its name and aliases, each a form.
    /// Its forms' compact deletions go to `compact_deletes`, as (hash, form) pairs.
    fn add_tool(
        &mut self,
        tool: usize,
        entry: NameEntry<'_>,
        compact_deletes: &mut Vec<(u64, u32)>,
    ) {
        self.tools += 1;
        self.destructive.push(entry.destructive);
        self.lower_names.push(entry.name.to_lowercase().into());
        self.forms_of.push(Vec::new());
        self.exact.entry(entry.name.into()).or_default().push(tool);
        self.add_form(tool, entry.name, compact_deletes);
        self.namespaces.add(tool, entry.name);
        for alias in entry.aliases {
            let list = self.alias.entry(alias.as_str().into()).or_default();
            if !list.contains(&tool) {
                list.push(tool);
            }
            self.add_form(tool, alias, compact_deletes);
        }
    }

    /// Each catalog stem under its synonym class.
    fn add_synonym_classes(&mut self) {
        let stems: Vec<Box<str>> = self.postings.keys().cloned().collect();
        for stem in stems {
            let class = canon(&stem);
            if !class.is_empty() {
                self.class_members
                    .entry(class)
                    .or_default()
                    .push(stem.clone());
            }
        }
    }

    /// Every spelling of a form's words (as written, and as its stem), numbered, with its
    /// polarity, its rivals and its deletion neighbourhood.
    fn add_spellings(&mut self) {
        let mut stem_of: FastMap<Box<str>, Box<str>> = FastMap::default();
        for form in &self.forms {
            for (raw, stem) in form.raw.iter().zip(&form.stems) {
                stem_of.insert(raw.clone(), stem.clone());
                stem_of.insert(stem.clone(), stem.clone());
            }
        }
        let mut word_deletes = Vec::new();
        for (id, (text, stem)) in stem_of.into_iter().enumerate() {
            let id = id as u32;
            // The same deletion from other positions (`ab` from `aab`) is held once.
            each_char_deletion_hash(&text, typo_allowance(char_len(&text)), &mut |del| {
                word_deletes.push((del, id))
            });
            self.spelling_ids.insert(text.clone(), id);
            self.spelling_polarity.push(Polarity::of(&text));
            self.rivals.push(Rivals::complete(&text));
            self.spellings.push((text, stem));
        }
        self.word_deletes = DeletionTable::build(word_deletes);
    }

    fn add_form(&mut self, tool: usize, name: &str, compact_deletes: &mut Vec<(u64, u32)>) {
        if name.len() > MAX_NAME_LEN {
            return;
        }
        let raw: Vec<Box<str>> = split_words(name).into_iter().map(Into::into).collect();
        if raw.is_empty() {
            return;
        }
        let stems: Vec<Box<str>> = raw.iter().map(|w| singular(w).into()).collect();
        let compact: Box<str> = raw.concat().into();
        let id = self.forms.len() as u32;
        self.forms_of[tool].push(id);
        let push = |map: &mut FastMap<Box<str>, Vec<u32>>, key: Box<str>| {
            let list = map.entry(key).or_default();
            if !list.contains(&id) {
                list.push(id);
            }
        };
        push(&mut self.by_compact, compact.clone());
        push(&mut self.by_stems, stems.concat().into());
        push(&mut self.by_bag, bag_key(&stems).into());
        for stem in &stems {
            push(&mut self.postings, stem.clone());
        }
        if char_len(&compact) >= 6 {
            each_char_deletion_hash(&compact, 1, &mut |del| compact_deletes.push((del, id)));
        }
        let raw_inflected = raw.iter().map(|w| inflected_ids(w)).collect();
        self.forms.push(Form {
            tool,
            relational: relation::any_relational(&raw),
            negations: word_bits(&raw, is_negation),
            fillers: word_bits(&stems, is_filler),
            raw_inflected,
            raw,
            stem_polarity: stems.iter().map(|s| Polarity::of(s)).collect(),
            stems,
            fused: fused_ids(&compact),
            compact,
        });
    }

    /// Number of tools indexed.
    pub fn len(&self) -> usize {
        self.tools
    }

    pub fn is_empty(&self) -> bool {
        self.tools == 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::NameEntry;
    use super::*;

    /// A form's marks agree with `is_negation` of each word as written and `is_filler` of each
    /// stem, in the 64 words kept in bits and past them: generated names of negations, fillers
    /// and other words, up to 120 words long.
    #[test]
    fn marks_of_negations_and_fillers_agree_with_the_tests() {
        let words = [
            "not", "no", "un", "the", "with", "tool", "file", "get", "nots", "a",
        ];
        let mut rng = fastrand::Rng::with_seed(0x0F_0E_A5);
        // Half of them of the short words only, so that many pass 64 words within the limit.
        let short = ["a", "no", "un", "the"];
        let names: Vec<String> = (0..300)
            .map(|k| {
                let pool: &[&str] = if k % 2 == 0 { &words } else { &short };
                (0..rng.usize(1..=120))
                    .map(|_| pool[rng.usize(..pool.len())])
                    .collect::<Vec<_>>()
                    .join("_")
            })
            .filter(|n| n.len() <= MAX_NAME_LEN)
            .collect();
        let index = NameIndex::new(names.iter().map(|name| NameEntry {
            name,
            aliases: &[],
            destructive: false,
        }));
        let mut longest = 0;
        for form in &index.forms {
            longest = longest.max(form.raw.len());
            for j in 0..form.raw.len() + 2 {
                let negation = form.raw.get(j).is_some_and(|w| is_negation(w));
                let filler = form.stems.get(j).is_some_and(|w| is_filler(w));
                assert_eq!(form.is_negation(j), negation, "{:?} at {j}", form.raw);
                assert_eq!(form.is_filler(j), filler, "{:?} at {j}", form.raw);
            }
        }
        assert!(longest > 64, "no form past 64 words (longest {longest})");
    }
}
