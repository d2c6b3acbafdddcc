//! The cost model of tier 4 in one place: what a typo, a synonym, a dropped or an extra word
//! costs (`UNIT`, `DROPPED`, `EXTRA`, `FILLER`), the score of one form against the request,
//! and the letters-only comparison for requests that lost their word boundaries.

use super::fuzzy::{Candidate, Kind};
use super::index::Form;
use super::query::Query;
use super::relation::{self, Order};
use super::Rule;
use crate::resolve::meaning::{read_letters, Reading, RivalTable};
use crate::resolve::polarity::{
    fused_affixes, ids_opposed, opposed_of, same_stem_opposed, Affixes, Word,
};
use crate::resolve::vocab::is_known_word;
use crate::text::edits::osa_within;
use crate::text::lexicon::same_lemma;
use crate::text::words::char_len;

// Fuzzy costs, in quarter units so that everything stays integral.
/// One character edit inside a word, or a synonym.
pub(super) const UNIT: u32 = 4;
/// A word of the tool missing from the request.
pub(super) const DROPPED: u32 = 4;
/// A word of the request missing from the tool: dearer than a dropped word, because the caller
/// asked for something this tool does not say it does.
pub(super) const EXTRA: u32 = 6;
/// A dropped or extra filler word ("with", "tool", "the"): it rarely changes the meaning.
pub(super) const FILLER: u32 = 2;

/// Scores one form against the request. Words are matched as a bag (order was tier 3's
/// business): identical stems first, then synonyms, then typos; what is left over on either
/// side is an extra or a dropped word.
/// `rivals`: the catalog's words' rivals (`resolve/meaning.rs`).
pub(super) fn score(
    rivals: &dyn RivalTable,
    query: &Query,
    form: &Form,
    expansions: &[Vec<(&str, u32, Kind)>],
    letters: bool,
    known: &dyn Fn(&str) -> bool,
) -> Candidate {
    let mut m = Matching::new(query, form);
    m.match_words(Kind::Same, expansions);
    m.match_words(Kind::Synonym, expansions);
    m.match_words(Kind::Typo, expansions);
    m.pair_opposites(expansions);
    m.price_dropped();
    m.price_extra(known);
    let mut rule = m.edits.rule();
    let mut correctable = m.correctable();
    // The request may have lost its word boundaries (`raedfile`): compare the letters.
    if letters && query.stems.len() != form.stems.len() {
        if let Some(d) = letters_distance(query, form, m.cost) {
            m.cost = UNIT * d as u32;
            rule = Rule::Typo;
            match read_letters(&query.compact, &form.raw, d, rivals) {
                Reading::Opposed => {
                    m.blocked = true;
                    correctable = false;
                }
                Reading::Typo => correctable = !request_word_lacking(query, form),
                Reading::Word => correctable = false,
            }
        }
    }
    // Words moved across a relational word state another relation: priced as a substitution
    // and never chosen, like an opposite word (`relation.rs`).
    match relation::order(query, form, &m.pairs) {
        Order::Kept => {}
        Order::Unclear => correctable = false,
        Order::Moved => {
            m.cost += 2 * UNIT;
            m.blocked = true;
        }
    }
    Candidate {
        tool: form.tool,
        cost: m.cost,
        rule,
        correctable,
        blocked: m.blocked || m.negation_left_over(),
    }
}

/// The kinds of difference between the request and a form.
#[derive(Default)]
struct Edits {
    typo: bool,
    synonym: bool,
    dropped: bool,
    extra: bool,
}

impl Edits {
    /// The rule of a correction: the one kind of difference it makes, or `Fuzzy` for several.
    fn rule(&self) -> Rule {
        match (self.typo, self.synonym, self.dropped, self.extra) {
            (true, false, false, false) => Rule::Typo,
            (false, true, false, false) => Rule::Synonym,
            (false, false, true, false) => Rule::DroppedWord,
            (false, false, false, true) => Rule::ExtraWord,
            _ => Rule::Fuzzy,
        }
    }
}

/// The request's words matched with one form's, and what that costs so far.
struct Matching<'a> {
    query: &'a Query,
    form: &'a Form,
    /// Per form word: matched.
    used: Marks,
    /// Per request word: matched.
    matched: Marks,
    cost: u32,
    /// Whether word order can state another relation (`relation::applies`): then
    /// (request word, tool word) as matched, for `relation::order`.
    relational: bool,
    pairs: Vec<(usize, usize)>,
    edits: Edits,
    /// Some word matched as written or with a typo.
    anchored: bool,
    /// Some word matched by a typo that may not be corrected.
    guessed: bool,
    /// Differs by an opposite: never corrected to, never suggested.
    blocked: bool,
    /// Dropped or extra words that are not fillers.
    content_edits: u32,
}

impl<'a> Matching<'a> {
    fn new(query: &'a Query, form: &'a Form) -> Self {
        Matching {
            query,
            form,
            used: Marks::new(form.stems.len()),
            matched: Marks::new(query.stems.len()),
            cost: 0,
            relational: relation::applies(query, form),
            pairs: Vec::new(),
            edits: Edits::default(),
            anchored: false,
            guessed: false,
            blocked: false,
            content_edits: 0,
        }
    }

    /// One pass over the request words still unmatched: each takes the cheapest free form
    /// word its expansions of kind `pass` reach (a `Guess` counts as a typo). Inlined into
    /// each of the three calls, so that each pass is compiled for its own kind.
    #[inline(always)]
    fn match_words(&mut self, pass: Kind, expansions: &[Vec<(&str, u32, Kind)>]) {
        let stems = &self.form.stems;
        for (i, list) in expansions.iter().enumerate() {
            if self.matched.get(i) {
                continue;
            }
            let mut best: Option<(u32, usize, bool)> = None;
            for (word, word_cost, kind) in list {
                let guess = pass == Kind::Typo && *kind == Kind::Guess;
                if *kind != pass && !guess {
                    continue;
                }
                // The first form word still free that is this word.
                let free = |&j: &usize| !self.used.get(j) && *stems[j] == **word;
                if let Some(j) = (0..stems.len()).find(free) {
                    if best.is_none_or(|(c, _, _)| *word_cost < c) {
                        best = Some((*word_cost, j, guess));
                    }
                }
            }
            if let Some((word_cost, j, guess)) = best {
                self.used.set(j);
                self.matched.set(i);
                if self.relational {
                    self.pairs.push((i, j));
                }
                self.cost += word_cost;
                self.guessed |= guess;
                match pass {
                    Kind::Same => self.anchored = true,
                    Kind::Typo => {
                        self.anchored = true;
                        self.edits.typo = true;
                    }
                    Kind::Synonym => self.edits.synonym = true,
                    Kind::Guess | Kind::Opposed => {}
                }
            }
        }
    }

    /// A request word opposed to a leftover tool word (`set` against `get`) pairs up at the
    /// price of a substitution: the candidate can then never be chosen, but it stays as close
    /// as it really is, so that a request halfway between two opposite tools is not "clear".
    fn pair_opposites(&mut self, expansions: &[Vec<(&str, u32, Kind)>]) {
        let (query, form) = (self.query, self.form);
        for (i, r) in query.stems.iter().enumerate() {
            if self.matched.get(i) {
                continue;
            }
            let r = Word::new(r, &query.stem_polarity()[i]);
            let opposed_to = |j: usize| {
                let word = Word::new(&form.stems[j], &form.stem_polarity[j]);
                opposed_of(r, word)
                    || expansions[i]
                        .iter()
                        .any(|(w, _, kind)| *kind == Kind::Opposed && **w == *form.stems[j])
            };
            if let Some(j) = (0..form.stems.len()).find(|&j| !self.used.get(j) && opposed_to(j)) {
                self.used.set(j);
                self.matched.set(i);
                self.cost += 2 * UNIT;
                self.blocked = true;
            }
        }
    }

    /// Prices the form's words the request lacks.
    fn price_dropped(&mut self) {
        for j in 0..self.form.stems.len() {
            if !self.used.get(j) {
                self.edits.dropped = true;
                if self.form.is_filler(j) {
                    self.cost += FILLER;
                } else {
                    self.cost += DROPPED;
                    self.content_edits += 1;
                }
            }
        }
    }

    /// Prices the request's words the form lacks. `unget_team_info` is not `team_info` with
    /// a stray word: it negates `get`; nor is `created_delete_file` `delete_file` with one:
    /// its extra word is the opposite of one the tool has, in any inflection.
    fn price_extra(&mut self, known: &dyn Fn(&str) -> bool) {
        let (query, form) = (self.query, self.form);
        for (i, stem) in query.stems.iter().enumerate() {
            if self.matched.get(i) {
                continue;
            }
            self.edits.extra = true;
            if query.fillers()[i] {
                self.cost += FILLER;
            } else {
                self.cost += EXTRA;
                self.content_edits += 1;
            }
            let word = Word::new(stem, &query.stem_polarity()[i]);
            self.blocked |= query.negates_known(known)[i]
                || (0..form.stems.len()).any(|j| {
                    same_stem_opposed(word, Word::new(&form.stems[j], &form.stem_polarity[j]))
                        || form.raw_inflected[j]
                            .as_deref()
                            .is_some_and(|ids| ids_opposed(query.raw_inflected(i), Some(ids)))
                });
        }
    }

    /// Within the fuzzy tier's limits on its own. A word missing on one side and another
    /// word on the other is a substitution: another object (`delete_user` is not
    /// `delete_file`), never a correction.
    fn correctable(&self) -> bool {
        let matched_words = self.matched.count();
        self.anchored
            && !self.guessed
            && self.cost > 0
            && !(self.edits.dropped && self.edits.extra)
            && match self.content_edits {
                // Typos, synonyms and fillers: one edit for a one-word name, two for longer
                // ones.
                0 => {
                    self.cost
                        <= if self.form.stems.len() <= 1 {
                            UNIT
                        } else {
                            2 * UNIT
                        }
                }
                // One dropped or extra word and nothing else but a filler; what is left must
                // still say enough (two words in common) to single the tool out.
                1 => self.cost <= EXTRA && matched_words >= 2,
                _ => false,
            }
    }

    /// Opposed pairs were found above; a negation word left over on either side blocks too.
    /// The complete guard (`opposed_forms`) runs again on the final choice and on each
    /// suggestion.
    fn negation_left_over(&self) -> bool {
        let (query, form) = (self.query, self.form);
        let negations = query.negations();
        (0..negations.len()).any(|i| !self.matched.get(i) && negations[i])
            || (0..form.raw.len()).any(|j| !self.used.get(j) && form.is_negation(j))
    }
}

/// Which words of one side are matched: a bit a word for the first 64 (a real name has a
/// handful), a vector past them, so that scoring a form allocates nothing.
struct Marks {
    low: u64,
    high: Vec<bool>,
}

impl Marks {
    fn new(len: usize) -> Self {
        Marks {
            low: 0,
            high: vec![false; len.saturating_sub(64)],
        }
    }

    fn get(&self, i: usize) -> bool {
        match i.checked_sub(64) {
            None => self.low >> i & 1 == 1,
            Some(k) => self.high.get(k).is_some_and(|m| *m),
        }
    }

    fn set(&mut self, i: usize) {
        match i.checked_sub(64) {
            None => self.low |= 1 << i,
            Some(k) => {
                if let Some(m) = self.high.get_mut(k) {
                    *m = true;
                }
            }
        }
    }

    fn count(&self) -> usize {
        self.low.count_ones() as usize + self.high.iter().filter(|m| **m).count()
    }
}

/// For a request that may have lost its word boundaries: the edit distance of its letters
/// from the form's, when within the allowance of its length and cheaper than `cost`. A typo
/// of the letters never changes a word's prefix (`dequeuevehicle` is not `enqueue_vehicle`).
fn letters_distance(query: &Query, form: &Form, cost: u32) -> Option<usize> {
    let allowance = match char_len(&query.compact) {
        0..=5 => 0,
        6..=11 => 1,
        _ => 2,
    };
    if allowance == 0 || letters_change_a_prefix(query, form) {
        return None;
    }
    let d = osa_within(&query.compact, &form.compact, allowance).unwrap_or(usize::MAX);
    (d > 0 && d <= allowance && (UNIT * d as u32) < cost).then_some(d)
}

/// A fused request that is itself a word stays whole (`offset`, `download`); letters as close
/// to a rival spelling of the tool (`getpayee` against `get_payer`, `sortdsc` against
/// `sort_asc`) are no correction. So does a word of the request that the tool lacks (`apply`
/// is no misspelling of `appy` in `AppyPieAIAppBuilder`).
fn request_word_lacking(query: &Query, form: &Form) -> bool {
    (query.raw.len() == 1 && is_known_word(&query.raw[0]))
        || (0..query.raw.len())
            .any(|i| is_known_word(&query.raw[i]) && !covered(i, &query.raw, &form.raw))
}

/// Whether the request's letters, aligned with the form's words (or the form's with the
/// request's, whichever has fewer words), change the prefix of some word.
fn letters_change_a_prefix(query: &Query, form: &Form) -> bool {
    if query.raw.len() < form.raw.len() {
        fused_affixes(&query.compact, &form.raw) != Affixes::Unrelated
    } else {
        fused_affixes(&form.compact, &query.raw) != Affixes::Unrelated
    }
}

pub(super) fn is_filler(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "of"
            | "for"
            | "with"
            | "by"
            | "at"
            | "my"
            | "and"
            | "tool"
            | "function"
            | "func"
            | "fn"
            | "api"
            | "cmd"
            | "command"
            | "action"
            | "method"
    )
}

/// Whether request word `i` stands for whole words of the tool: one of them (or a form of its
/// lemma), several of them fused (`filelist` for `file`, `list`), or a piece of one that the
/// request's neighbouring words complete (`api`, `token` for `apitoken`). A word that is only
/// part of a tool word (`toke` in `token`) stands for none.
fn covered<T: AsRef<str>>(i: usize, request: &[String], tool: &[T]) -> bool {
    let w = request[i].as_str();
    let words: Vec<&str> = tool.iter().map(AsRef::as_ref).collect();
    if words.iter().any(|f| *f == w || same_lemma(w, f)) {
        return true;
    }
    let runs = |pieces: &[&str], whole: &str| {
        (0..pieces.len()).any(|s| (s + 1..=pieces.len()).any(|e| pieces[s..e].concat() == whole))
    };
    if runs(&words, w) {
        return true;
    }
    // A run of request words around `i` that makes one tool word.
    let pieces: Vec<&str> = request.iter().map(String::as_str).collect();
    words
        .iter()
        .any(|f| (0..=i).any(|s| (i + 1..=pieces.len()).any(|e| pieces[s..e].concat() == *f)))
}

#[cfg(test)]
mod tests {
    use super::Marks;

    /// Marks agree with a vector of flags at every length and position, in the 64 words kept
    /// in bits and past them.
    #[test]
    fn marks_agree_with_a_vector_of_flags() {
        for len in [0, 1, 63, 64, 65, 130] {
            for step in [1, 3, 7] {
                let (mut marks, mut flags) = (Marks::new(len), vec![false; len]);
                for i in (0..len).step_by(step) {
                    marks.set(i);
                    flags[i] = true;
                }
                for (i, flag) in flags.iter().enumerate() {
                    assert_eq!(marks.get(i), *flag, "len {len} step {step} at {i}");
                }
                let count = flags.iter().filter(|f| **f).count();
                assert_eq!(marks.count(), count, "len {len} step {step}");
            }
        }
    }
}
