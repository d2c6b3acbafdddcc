//! The guide (`docs/guide`, an mdBook) and the documents a newcomer reads first (README.md,
//! CONTRIBUTING.md) hold together without a network:
//!
//! - every relative link points at a file or directory that exists, and every `#anchor` at a
//!   heading of its target (slugs as GitHub and mdBook make them: lower case, spaces to `-`,
//!   punctuation dropped, `-1`, `-2` for repeats);
//! - every `{{#include path:anchor}}` of the guide names a file that exists and an anchor that
//!   file marks with `ANCHOR:` and `ANCHOR_END:` lines;
//! - every `rust` block of the guide is such an include, so the code a reader sees is code the
//!   build compiles: an example, the crate in `fixtures/my-crate`, or a module below (whose
//!   tests hold what the chapters say of it); the README's one `rust` block is the quickstart
//!   example (`readme.rs`);
//! - every chapter file is in `SUMMARY.md`.

mod search;
#[cfg(feature = "semantic")]
mod semantic;
mod serving;
mod tools;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The documents checked: README.md, CONTRIBUTING.md and every page of the guide.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut docs = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut chapters = markdown_files(&root.join("docs/guide/src"));
    chapters.sort();
    docs.extend(chapters);
    docs
}

fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(markdown_files(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            found.push(path);
        }
    }
    found
}

/// A fenced code block: its info string (`rust`, `sh`, ...) and its lines.
struct Block {
    info: String,
    lines: Vec<String>,
    line: usize,
}

/// What the checks need of one Markdown text: its headings, its links (with their line), its
/// includes and its code blocks. Headings and links inside code blocks and code spans are not
/// headings or links.
#[derive(Default)]
struct Parsed {
    headings: Vec<String>,
    links: Vec<(usize, String)>,
    includes: Vec<(usize, String)>,
    blocks: Vec<Block>,
}

fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut fence: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim_start();
        for include in includes_in(line) {
            parsed.includes.push((n, include));
        }
        if let Some((marker, block)) = &mut fence {
            if trimmed.starts_with(marker.as_str())
                && trimmed.trim_matches(|c| c == '`' || c == '~').is_empty()
            {
                let (_, block) = fence.take().unwrap();
                parsed.blocks.push(block);
            } else {
                block.lines.push(line.to_string());
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let ch = trimmed.chars().next().unwrap();
            let marker: String = trimmed.chars().take_while(|&c| c == ch).collect();
            let info = trimmed[marker.len()..].trim().to_string();
            fence = Some((
                marker,
                Block {
                    info,
                    lines: Vec::new(),
                    line: n,
                },
            ));
            continue;
        }
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            parsed.headings.push(trimmed[hashes..].trim().to_string());
        }
        let prose = without_code_spans(line);
        // `[label]: target`, a reference definition.
        if let Some(rest) = prose.trim_start().strip_prefix('[') {
            if let Some((_, target)) = rest.split_once("]: ") {
                parsed.links.push((n, target.trim().to_string()));
            }
        }
        // `[text](target)` and `![alt](target)`.
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            parsed
                .links
                .push((n, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
    }
    parsed
}

/// `{{#include path...}}` (and `{{#rustdoc_include ...}}`) directives of a line.
fn includes_in(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("{{#") {
        let after = &rest[at + 3..];
        let Some(end) = after.find("}}") else { break };
        let directive = &after[..end];
        if let Some(arg) = directive
            .strip_prefix("include ")
            .or_else(|| directive.strip_prefix("rustdoc_include "))
        {
            found.push(arg.trim().to_string());
        }
        rest = &after[end..];
    }
    found
}

/// The line with its code spans (`` `...` ``) blanked out.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it, from its text as rendered.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` renders as `text`.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find("](")
            .and_then(|mid| Some((mid, after[mid..].find(')')? + mid)))
        {
            Some((mid, close)) => {
                text.push_str(&after[..mid]);
                rest = &after[close + 1..];
            }
            None => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c)
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a document's headings, repeats numbered as the renderers number them.
fn anchors(headings: &[String]) -> HashSet<String> {
    let mut used = HashSet::new();
    for heading in headings {
        let base = slug(heading);
        let mut id = base.clone();
        let mut n = 0;
        while !used.insert(id.clone()) {
            n += 1;
            id = format!("{base}-{n}");
        }
    }
    used
}

/// Every problem of the document at `path` whose text is `text`: broken links, anchors and
/// includes, and (in the guide) `rust` blocks that are not includes.
fn problems(path: &Path, text: &str) -> Vec<String> {
    let dir = path.parent().unwrap();
    let parsed = parse(text);
    let shown = path
        .strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string();
    let mut out = Vec::new();
    for (line, link) in &parsed.links {
        if link.is_empty() || link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
        let target = if file.is_empty() {
            path.to_path_buf()
        } else {
            dir.join(file)
        };
        if !file.is_empty() && !target.exists() {
            out.push(format!(
                "{shown}:{line}: `{link}`: no file {}",
                target.display()
            ));
            continue;
        }
        if anchor.is_empty() {
            continue;
        }
        if target.extension().is_none_or(|e| e != "md") {
            out.push(format!(
                "{shown}:{line}: `{link}`: an anchor into a file that is not Markdown"
            ));
            continue;
        }
        let headings = if file.is_empty() {
            parsed.headings.clone()
        } else {
            parse(&std::fs::read_to_string(&target).unwrap()).headings
        };
        if !anchors(&headings).contains(anchor) {
            out.push(format!(
                "{shown}:{line}: `{link}`: no heading has the anchor `{anchor}`"
            ));
        }
    }
    let in_guide = path.starts_with(Path::new(ROOT).join("docs/guide"));
    // mdBook expands includes in the guide's pages only; elsewhere the text is just text.
    for (line, include) in parsed.includes.iter().filter(|_| in_guide) {
        let mut parts = include.splitn(2, ':');
        let file = dir.join(parts.next().unwrap());
        let Ok(source) = std::fs::read_to_string(&file) else {
            out.push(format!(
                "{shown}:{line}: include `{include}`: no file {}",
                file.display()
            ));
            continue;
        };
        let Some(selector) = parts.next() else {
            continue;
        };
        if selector.chars().all(|c| c.is_ascii_digit() || c == ':') {
            continue; // a range of lines
        }
        let marks = |what: &str| {
            source.lines().any(|l| {
                l.split_once(what)
                    .is_some_and(|(_, name)| name.trim() == selector)
            })
        };
        if !marks("ANCHOR:") || !marks("ANCHOR_END:") {
            out.push(format!(
                "{shown}:{line}: include `{include}`: {} has no `ANCHOR: {selector}` ... `ANCHOR_END: {selector}`",
                file.display()
            ));
        }
    }
    for block in parsed
        .blocks
        .iter()
        .filter(|b| b.info.split(',').next() == Some("rust"))
    {
        let included = block
            .lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .all(|l| {
                l.trim().starts_with("{{#include ") || l.trim().starts_with("{{#rustdoc_include ")
            });
        if in_guide && !included {
            out.push(format!(
                "{shown}:{}: a `rust` block written in the page: include it from a file the build \
                 compiles (`{{{{#include path:anchor}}}}`), or mark it `text` and say why it cannot compile",
                block.line
            ));
        }
    }
    out
}

#[test]
fn links_anchors_and_includes_hold() {
    let mut all = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        all.extend(problems(&path, &text));
    }
    assert!(all.is_empty(), "\n{}", all.join("\n"));
}

#[test]
fn the_readme_s_only_rust_block_is_the_quickstart() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let rust: Vec<Block> = parse(&readme)
        .blocks
        .into_iter()
        .filter(|b| b.info.split(',').next() == Some("rust"))
        .collect();
    assert_eq!(
        rust.len(),
        1,
        "README.md: the quickstart is its one `rust` block"
    );
}

#[test]
fn every_chapter_is_in_the_summary() {
    let src = Path::new(ROOT).join("docs/guide/src");
    let summary = parse(&std::fs::read_to_string(src.join("SUMMARY.md")).unwrap());
    let listed: HashSet<PathBuf> = summary.links.iter().map(|(_, l)| src.join(l)).collect();
    for chapter in markdown_files(&src) {
        if chapter.file_name().is_some_and(|n| n == "SUMMARY.md") {
            continue;
        }
        assert!(
            listed.contains(&chapter),
            "{} is not in SUMMARY.md",
            chapter.display()
        );
    }
}

/// The checks find what they are for.
#[test]
fn the_checks_catch_broken_links_anchors_includes_and_written_code() {
    let page = Path::new(ROOT).join("docs/guide/src/page.md");
    let text = "# A page\n\n## Its `second` part\n\n\
                [ok](#its-second-part) [ok](tools.md#where-tools-must-live) [ok](https://x.example/a.md)\n\
                [gone](nowhere.md) [no anchor](#its-third-part) [no anchor](tools.md#nothing-here)\n\
                `[not a link](nowhere.md)`\n\n\
                ```rust\n{{#include ../../../tests/it/guide/tools.rs:flatten}}\n```\n\n\
                ```rust\n{{#include ../../../tests/it/guide/tools.rs:no_such_anchor}}\n```\n\n\
                ```rust\nfn main() {}\n```\n\n\
                ```sh\n# not a heading\n[not a link](nowhere.md)\n```\n";
    let found = problems(&page, text);
    let expected = [
        "docs/guide/src/page.md:6: `nowhere.md`: no file",
        "docs/guide/src/page.md:6: `#its-third-part`: no heading has the anchor `its-third-part`",
        "docs/guide/src/page.md:6: `tools.md#nothing-here`: no heading has the anchor `nothing-here`",
        "docs/guide/src/page.md:14: include `../../../tests/it/guide/tools.rs:no_such_anchor`",
        "docs/guide/src/page.md:17: a `rust` block written in the page",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (problem, start) in found.iter().zip(expected) {
        assert!(
            problem.starts_with(start),
            "{problem}\n  does not start with\n{start}"
        );
    }
}

#[test]
fn slugs_are_the_renderers() {
    assert_eq!(
        slug("Quickstart: tools in Rust"),
        "quickstart-tools-in-rust"
    );
    assert_eq!(
        slug("Search by meaning (feature `semantic`)"),
        "search-by-meaning-feature-semantic"
    );
    assert_eq!(
        slug("`forwardToken`: a caller's own token"),
        "forwardtoken-a-callers-own-token"
    );
    assert_eq!(slug("[Links](x.md) and `code`"), "links-and-code");
    let twice = anchors(&["Tools".into(), "Tools".into()]);
    assert!(twice.contains("tools") && twice.contains("tools-1"));
}
