"""What the abstention probes share: the background sentences, and a tool name's words as
disco's semantic text spells them."""

# Sentences describing what a language model does by itself, which compete with the tools.
BACKGROUND = [
    "write a story, a poem, an essay, a letter or song lyrics",
    "explain a concept or answer a general knowledge question",
    "give advice, tips or an opinion",
    "summarize, paraphrase, rewrite, edit or translate the given text",
    "classify a sentence or extract words from a paragraph",
    "solve a math problem or prove a theorem",
    "chat, say hello, tell a joke",
    "write, explain or fix a piece of code",
]


def name_words(name):
    """A tool name as disco's semantic text spells it ("searchPapers" -> "search Papers")."""
    out, prev = "", None
    for c in name:
        if c in "_-./:":
            if not out.endswith(" "):
                out += " "
        else:
            if c.isupper() and prev is not None and (prev.islower() or prev.isdigit()):
                out += " "
            out += c
        prev = c
    return out.strip()
