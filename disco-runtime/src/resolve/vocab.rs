//! Words a model swaps for one another in tool names.

use std::sync::OnceLock;

use crate::text::hash::{FastMap, FastSet};
use crate::text::lexicon;

/// Verb synonyms a model swaps freely. Each word maps to its class head. Classes that are
/// opposites of each other (create/delete) are listed in OPPOSITES by head, so `add` and
/// `remove` are opposed although neither is in the table itself.
pub(crate) const SYNONYMS: &[(&str, &str)] = &[
    ("search", "search"),
    ("find", "search"),
    ("lookup", "search"),
    ("query", "search"),
    ("locate", "search"),
    ("get", "get"),
    ("fetch", "get"),
    ("read", "get"),
    ("retrieve", "get"),
    ("show", "get"),
    ("obtain", "get"),
    ("view", "get"),
    ("create", "create"),
    ("add", "create"),
    ("new", "create"),
    ("make", "create"),
    ("insert", "create"),
    ("update", "update"),
    ("edit", "update"),
    ("modify", "update"),
    ("change", "update"),
    ("alter", "update"),
    ("delete", "delete"),
    ("remove", "delete"),
    ("erase", "delete"),
    ("destroy", "delete"),
    ("del", "delete"),
    ("rm", "delete"),
    ("list", "list"),
    ("enumerate", "list"),
    ("ls", "list"),
    ("send", "send"),
    ("post", "send"),
    ("publish", "send"),
    ("run", "run"),
    ("execute", "run"),
    ("exec", "run"),
    ("invoke", "run"),
    ("start", "start"),
    ("launch", "start"),
    ("boot", "start"),
    ("stop", "stop"),
    ("halt", "stop"),
    ("shutdown", "stop"),
    ("shut", "stop"),
    ("terminate", "stop"),
    ("kill", "stop"),
    ("calculate", "calculate"),
    ("compute", "calculate"),
    ("calc", "calculate"),
];

pub(crate) fn canon(stem: &str) -> &'static str {
    static MAP: OnceLock<FastMap<&'static str, &'static str>> = OnceLock::new();
    let map = MAP.get_or_init(|| SYNONYMS.iter().copied().collect());
    map.get(stem).copied().unwrap_or("")
}

/// Words of APIs that are not in the English lexicon but are words all the same: a request
/// word that is one of them is never a misspelling of another word, and a misspelling as
/// close to one of them as to a catalog word is not taken for the catalog word (`mn` is one
/// edit from `min` and two from `max`).
pub(crate) const API_WORDS: &[&str] = &[
    // comparators
    "lt",
    "gt",
    "lte",
    "gte",
    "le",
    "ge",
    "eq",
    "ne",
    "neq",
    // directions and scopes
    "rx",
    "tx",
    "dl",
    "ul",
    "dn",
    "up",
    "fwd",
    "bwd",
    "lhs",
    "rhs",
    "req",
    "res",
    "resp",
    "src",
    "dst",
    "ltr",
    "rtl",
    // magnitudes and order
    "min",
    "max",
    "lo",
    "hi",
    "asc",
    "desc",
    "dsc",
    "prev",
    "next",
    "inc",
    "dec",
    "incr",
    "decr",
    // names of things that are not English but are no misspelling either
    "id",
    "ids",
    "uuid",
    "guid",
    "uri",
    "urn",
    "url",
    "urls",
    "api",
    "apis",
    "http",
    "https",
    "json",
    "yaml",
    "toml",
    "xml",
    "csv",
    "html",
    "pdf",
    "sql",
    "db",
    "cli",
    "sdk",
    "cpu",
    "gpu",
    "io",
    "os",
    "ui",
    "ux",
    "ip",
    "dns",
    "tcp",
    "udp",
    "ssh",
    "ssl",
    "tls",
    "jwt",
    "oauth",
    "auth",
    "repo",
    "repos",
    "env",
    "cfg",
    "args",
    "params",
    "stdin",
    "stdout",
    "stderr",
    "regex",
    "webhook",
    "todo",
    "utc",
    // role nouns of APIs that are not in the English lexicon, beside their agents
    "followee",
    "callee",
    "grantee",
    "assignee",
    "mentee",
    "invitee",
    "interviewee",
    "awardee",
    "enrollee",
    "licencee",
    "transferee",
    "appointee",
    "nominee",
    "retiree",
    "grantor",
    "assignor",
    "licensor",
    "lessor",
    "transferor",
    "mentor",
];

/// Families of words that stand for opposite sides of one scale or relation: a word of one
/// side is the opposite of every word of the other, at every tier, in names and keys alike
/// (`price_lt` is not `price_gt`, `rx_bytes` is not `tx_bytes`). WordNet's antonyms and the
/// table in `polarity.rs` add the pairs of plain English; these are the API's own.
pub(crate) const FAMILIES: &[(&[&str], &[&str])] = &[
    // comparators
    (
        &[
            "lt", "lte", "le", "less", "below", "fewer", "smaller", "lower", "nlt",
        ],
        &[
            "gt", "gte", "ge", "greater", "above", "more", "larger", "bigger", "higher", "ngt",
        ],
    ),
    (&["eq", "equal", "equals"], &["ne", "neq", "unequal"]),
    // directions and scopes
    (
        &["rx", "receive", "received", "receiver", "recv"],
        &["tx", "transmit", "sent", "sender", "send"],
    ),
    (
        &[
            "dl",
            "download",
            "downloads",
            "downlink",
            "downstream",
            "dn",
            "down",
        ],
        &["ul", "upload", "uploads", "uplink", "upstream", "up"],
    ),
    (
        &["ingress", "inbound", "incoming", "inflow"],
        &["egress", "outbound", "outgoing", "outflow"],
    ),
    (
        &["north", "northbound", "northern", "northward"],
        &["south", "southbound", "southern", "southward"],
    ),
    (
        &["east", "eastbound", "eastern", "eastward"],
        &["west", "westbound", "western", "westward"],
    ),
    (&["local", "locally"], &["remote", "remotely"]),
    (&["ltr"], &["rtl"]),
    (&["left"], &["right"]),
    (
        &["fwd", "forward", "forwards"],
        &["bwd", "backward", "backwards", "back", "rev", "reverse"],
    ),
    (
        &["req", "request", "requests"],
        &["res", "resp", "response", "responses", "reply"],
    ),
    (&["lhs"], &["rhs"]),
    (
        &["src", "source", "from"],
        &["dst", "dest", "destination", "target", "to"],
    ),
    (&["sender"], &["recipient", "receiver"]),
    (&["client"], &["server"]),
    (&["parent"], &["child", "children"]),
    (&["ancestor", "ancestors"], &["descendant", "descendants"]),
    (&["predecessor"], &["successor"]),
    (&["upper", "uppercase"], &["lower", "lowercase"]),
    (&["inner"], &["outer"]),
    (&["prefix"], &["suffix"]),
    (&["head"], &["tail"]),
    (&["top"], &["bottom"]),
    (&["front"], &["back"]),
    (&["leader"], &["follower"]),
    (&["horizontal"], &["vertical"]),
    (
        &["encrypt", "encrypted", "encryption"],
        &["decrypt", "decrypted", "decryption"],
    ),
    (&["serialize"], &["deserialize"]),
    (
        &["whitelist", "allowlist", "allow"],
        &["blacklist", "denylist", "deny", "block"],
    ),
    // magnitudes and order
    (
        &["min", "minimum", "lo", "low", "lowest", "least", "floor"],
        &[
            "max", "maximum", "hi", "high", "highest", "most", "ceil", "ceiling",
        ],
    ),
    (&["minor"], &["major"]),
    (
        &["small", "smallest"],
        &["large", "largest", "big", "biggest"],
    ),
    (&["short", "shortest"], &["long", "longest"]),
    (&["asc", "ascending"], &["desc", "dsc", "descending"]),
    (
        &["first", "earliest", "oldest", "start", "begin", "since"],
        &["last", "latest", "newest", "end", "until"],
    ),
    (&["older", "earlier"], &["newer", "later"]),
    (&["old"], &["new"]),
    (&["prev", "previous", "before"], &["next", "after"]),
    (
        &["inc", "incr", "increment", "increase"],
        &["dec", "decr", "decrement", "decrease"],
    ),
    (&["positive", "pos"], &["negative", "neg"]),
    (
        &["success", "succeeded", "passed", "pass"],
        &["failure", "failed", "fail", "error"],
    ),
    (&["online"], &["offline"]),
    (&["sync"], &["async"]),
    (&["read", "readonly"], &["write", "writable"]),
    (&["import"], &["export"]),
    (
        &["include", "includes", "including"],
        &["exclude", "excludes", "excluding"],
    ),
    (&["open", "opened"], &["close", "closed"]),
];

/// Whether `word` is a word, not a misspelling: English (the lexicon), a word of APIs
/// (`API_WORDS` and every word of `FAMILIES`), or a role noun in `-ee` whose stem is a word or
/// names its agent (`followee`, `callee`, `mentee` beside `mentor`).
pub(crate) fn is_known_word(word: &str) -> bool {
    api_words().contains(word) || lexicon::is_english(word) || is_role_noun(word)
}

/// `API_WORDS` and the words of `FAMILIES`.
pub(crate) fn api_words() -> &'static FastSet<&'static str> {
    static SET: OnceLock<FastSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        let families = FAMILIES
            .iter()
            .flat_map(|(left, right)| left.iter().chain(right.iter()));
        API_WORDS.iter().chain(families).copied().collect()
    })
}

/// `-ee` after a stem whose agent noun (`-er`, `-or`) is a word: `followee` beside `follower`,
/// `callee` beside `caller`; `ductee` is none (there is no `ducter`).
fn is_role_noun(word: &str) -> bool {
    let Some(stem) = word.strip_suffix("ee").filter(|s| s.len() >= 3) else {
        return false;
    };
    ["er", "or"]
        .iter()
        .any(|end| lexicon::is_english(&format!("{stem}{end}")))
}

/// Whether `word` is a role noun of the lexicon or of `API_WORDS` (`payee`, `employer`,
/// `followee`): a rival of its partner only where it is a real word.
pub(crate) fn is_known_role(word: &str) -> bool {
    api_words().contains(word) || lexicon::is_english(word)
}

#[cfg(test)]
mod tests {
    use super::api_words;

    /// The letters guard takes a word of APIs' length in characters from its bytes, unchecked
    /// (`meaning::read_letters_within`): every such word must be ASCII.
    #[test]
    fn every_word_of_apis_is_ascii() {
        let words = api_words();
        assert!(!words.is_empty());
        for word in words {
            assert!(word.is_ascii(), "{word:?} is not ASCII");
        }
    }
}
