//! The ranking's weights: `Ranking` and its defaults, the abstention threshold, and the
//! sanitising of weights a caller sets.

use super::{SearchIndex, NF};

/// Default abstention threshold on the normalised score of the best hit. Chosen on one half of
/// the evaluation queries as the highest value that costs at most 1.5 points of Hit@5 on both
/// MetaTool and BFCL there, so that the 2-point limit holds on the other half and on all rows
/// too (see tests/corpus/search/README.md).
pub const DEFAULT_THRESHOLD: f32 = 0.22;

/// The fusion of the keyword and semantic scores (see [`Ranking`]), chosen on the `even` half
/// of the evaluation queries (tests/corpus/search/README.md).
const SEMANTIC_WEIGHT: f32 = 1.0;
const SEMANTIC_THRESHOLD: f32 = 0.25;
/// A tool that only the model finds is listed when its cosine with the query is at least this
/// (unrelated texts score about 0 to 0.1 with the evaluation's models): results are not filled
/// up with tools that have nothing to do with the query.
const SEMANTIC_FLOOR: f32 = 0.1;
/// The fusion scales the cosines down from the nearest tool over the spread of the nearest
/// ones, but never over less than this: two candidates whose cosines differ by 0.01 are nearly
/// tied, not a full unit apart.
const SEMANTIC_SPREAD_FLOOR: f32 = 0.2;
/// The fusion scales the keyword scores by the best one, but never by less than this many
/// distinctive words' worth: when only weak keyword matches exist, the best of them is not
/// counted as a full match.
const KEYWORD_SCALE_FLOOR: f32 = 1.0;

/// The name is the strongest evidence (authors name tools after what they do); keywords and
/// aliases are declared for search and nearly as strong; the description carries most words but
/// each says less; parameters say what a tool takes, which is weak evidence of what it is for.
const FIELD_WEIGHT: [f32; NF] = [3.0, 2.0, 2.0, 2.5, 1.0, 0.6, 0.4];
/// Length normalisation per field: short fields (names) hardly at all, prose fully.
const FIELD_B: [f32; NF] = [0.3, 0.3, 0.3, 0.3, 0.75, 0.5, 0.75];
const K1: f32 = 1.2;
/// Weight of the name-coverage bonus, in units of one distinctive word.
const NAME_COVERAGE_WEIGHT: f32 = 1.0;
/// The name words a query must match to earn the name-coverage bonus, each counted at its
/// match's weight: one word as written and a synonym or a misspelling of another (1.6, 1.7)
/// are enough, one word alone or two synonyms are not. Lowered from two whole words (chosen on
/// the `even` half of MetaTool, tests/corpus/search/README.md) so that "find issues about
/// login" finds `search_issues` also when other tools' descriptions say "search".
pub(super) const NAME_COVERAGE_MIN: f32 = 1.5;
/// Queries matching up to this many words get the whole name-coverage bonus; longer ones get
/// it scaled down by this over their count.
const NAME_COVERAGE_WORDS: f32 = 4.0;

/// A synonym (from the built-in map) matches at this fraction of an exact match, so that the
/// author's own word still wins.
const SYNONYM_WEIGHT: f32 = 0.6;
/// A one-edit spelling variant of a word the catalog does not know.
const TYPO_WEIGHT: f32 = 0.7;
/// Words that say a tool is wanted but not which one ("find", "tool", "information").
const GENERIC_WEIGHT: f32 = 0.4;

/// The ranking's weights. The defaults were chosen on half of the evaluation queries (see
/// tests/corpus/search/README.md); they are public so the evaluation can show their effect.
/// Fields may be added: build one from `Ranking::default()` and set the fields you change.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Per field (name, title, keywords, aliases, description, parameter names, parameter
    /// descriptions): how much one occurrence counts.
    pub field_weight: [f32; NF],
    /// Per field: how much the field's length discounts a match (BM25 `b`).
    pub field_b: [f32; NF],
    /// Term-frequency saturation (BM25 `k1`).
    pub k1: f32,
    /// A synonym from the built-in map matches at this fraction of an exact match.
    pub synonym: f32,
    /// A one-edit spelling variant of a word the catalog does not know.
    pub typo: f32,
    /// Words that ask for a tool without saying which ("find", "tool", "information").
    pub generic: f32,
    /// Bonus for the share of a name's words the query matched, in distinctive words.
    pub name_coverage: f32,
    /// Matched query words up to which the name-coverage bonus is whole: a long query shares
    /// two words with some name by chance in a large catalog, so there the bonus is scaled by
    /// this over the number of matched words.
    pub name_coverage_words: f32,
    /// Abstention threshold on the normalised score; 0 returns every matching tool.
    pub threshold: f32,
    /// With a semantic model (feature `semantic`), the ranking fuses the keyword scores and
    /// the model's cosines, each scaled to [0, 1] over its own list (keyword score over the
    /// best one, or over one distinctive word's worth when the best is weaker; cosine down from
    /// the first of the model's nearest tools over their spread, or over
    /// `semantic_spread_floor` when they are closer together): a tool scores
    /// `(keywords + semantic_weight * model) / (1 + semantic_weight)`.
    pub semantic_weight: f32,
    /// With a semantic model, a query abstains only when the keyword ranking abstains and no
    /// tool's cosine with the query reaches this.
    pub semantic_threshold: f32,
    /// With a semantic model, a tool that only the model finds (no keyword match) is listed
    /// only when its cosine with the query reaches this.
    pub semantic_floor: f32,
    /// With a semantic model, the least spread of cosines the fusion scales over (see
    /// `semantic_weight`); at least 0.01.
    pub semantic_spread_floor: f32,
    /// With a semantic model, the least keyword score the fusion scales over, in distinctive
    /// words (see `semantic_weight`).
    pub keyword_scale_floor: f32,
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            field_weight: FIELD_WEIGHT,
            field_b: FIELD_B,
            k1: K1,
            synonym: SYNONYM_WEIGHT,
            typo: TYPO_WEIGHT,
            generic: GENERIC_WEIGHT,
            name_coverage: NAME_COVERAGE_WEIGHT,
            name_coverage_words: NAME_COVERAGE_WORDS,
            threshold: DEFAULT_THRESHOLD,
            semantic_weight: SEMANTIC_WEIGHT,
            semantic_threshold: SEMANTIC_THRESHOLD,
            semantic_floor: SEMANTIC_FLOOR,
            semantic_spread_floor: SEMANTIC_SPREAD_FLOOR,
            keyword_scale_floor: KEYWORD_SCALE_FLOOR,
        }
    }
}

impl SearchIndex {
    /// Sets the abstention threshold on the normalised score; 0 returns every matching tool.
    pub fn with_threshold(mut self, threshold: f32) -> SearchIndex {
        self.ranking.threshold = clean(threshold, DEFAULT_THRESHOLD);
        self
    }

    /// Replaces the ranking weights (negative or non-finite values fall back to the defaults).
    pub fn with_ranking(mut self, ranking: Ranking) -> SearchIndex {
        let d = Ranking::default();
        let mut r = ranking;
        for f in 0..NF {
            r.field_weight[f] = clean(r.field_weight[f], d.field_weight[f]);
            r.field_b[f] = clean(r.field_b[f], d.field_b[f]).min(1.0);
        }
        r.k1 = clean(r.k1, d.k1);
        r.synonym = clean(r.synonym, d.synonym);
        r.typo = clean(r.typo, d.typo);
        r.generic = clean(r.generic, d.generic);
        r.name_coverage = clean(r.name_coverage, d.name_coverage);
        r.name_coverage_words = clean(r.name_coverage_words, d.name_coverage_words);
        r.threshold = clean(r.threshold, d.threshold);
        r.semantic_weight = clean(r.semantic_weight, d.semantic_weight);
        r.semantic_threshold = clean(r.semantic_threshold, d.semantic_threshold);
        r.semantic_floor = clean(r.semantic_floor, d.semantic_floor);
        // A spread of 0 would divide by zero when the nearest tools tie.
        r.semantic_spread_floor = clean(r.semantic_spread_floor, d.semantic_spread_floor).max(0.01);
        r.keyword_scale_floor = clean(r.keyword_scale_floor, d.keyword_scale_floor);
        self.ranking = r;
        self
    }

    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    pub fn threshold(&self) -> f32 {
        self.ranking.threshold
    }
}

fn clean(v: f32, default: f32) -> f32 {
    if v.is_finite() && v >= 0.0 {
        v
    } else {
        default
    }
}
