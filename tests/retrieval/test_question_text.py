"""`retrieval.question_text.clean_question_text`: issue-template noise out, code and prose kept as written."""

from __future__ import annotations

import pytest

from haystack_integrations.components.code_alias.retrieval.question_text import clean_question_text, shorten_url

PAYLOAD = (
    "eNqVkktr20AQx7/KsBQsYyEH0lJwZdMHObSHtLQ9LiTKamRvspoV+1AcjL57Rqs4ySEYctFq5/Gf38zsQXzruqKPKFai9MrpLoDHELuN"
    "JN121gU4gMMmB2XbLgasc7ivgtrBAI2zLcw4dyZJkrLkAxCsx/DsbC6psQ4ygwE0G8++8FHCJz4WizkcJMGTUEY5ZP0c1pvJClyKvDVYG"
    "LuF7Jog+3DQw/w6h55VAYacmRoT/W4FM/9AagYDO4YXipH1kosembMsyVPRVybiO9CS"
) * 8

VUE_ISSUE = f"""Inconsistent execution order of Sync Watchers on `computed` property
### Vue version

3.4.37

### Link to minimal reproduction

https://play.vuejs.org/#{PAYLOAD}

### Steps to reproduce

When using Vue's watch function with the `{{ flush: 'sync' }}` option, the callback order changes.

```ts
const n = ref(0)
const compN = computed(() => n.value)
watch(compN, (v) => console.log(`compN`, v), {{ flush: 'sync' }})
```

### What is expected?

_No response_

### System Info

_No response_

### Any additional comments?

_No response_
"""

BABEL_ISSUE = """[Bug]: incorrectly rejects `await` when following a function with an arrow in default parameters
### 💻

- [ ] Would you like to work on a fix?

### How are you using Babel?

Programmatic API (`babel.transform`, `babel.parse`)

### Input code

```js
(async function () {
  function f(_=()=>null) {}
  await null;
});
```

Here is the [REPL](https://babel.dev/repl#?browsers=defaults%2C%20not%20ie%2011&build=&builtIns=false&code_lz=MYewdgzgLgBAbgBhgXhgbQFA2zA3lnQgVgC4YByAMxBHIBoDDs4AmBACjgEMAbOmAB4BKPIyaEeAU1hwAj)

### Configuration file name

package.json

### Configuration

_No response_

### Current and expected behavior

> SyntaxError: 'await' is not allowed in async function parameters.

### Possible solution

_No response_
"""

AXIOS_COMMENT = """The timeoutErrorMessage property in config not work with Node.js
<!-- Click "Preview" for a more readable version --

Please read and follow the instructions before submitting an issue:

- Read all our documentation, especially the [README](https://github.com/axios/axios/blob/master/README.md).
⚠️👆 Feel free to these instructions before submitting the issue 👆⚠️
-->

#### Describe the bug
Upgrading from 0.26.1 to 0.27.2 cause: got "timeout of *ms exceeded"
"""


def test_vue_template_loses_the_playground_payload_and_empty_sections() -> None:
    cleaned = clean_question_text(VUE_ISSUE)
    assert PAYLOAD[:20] not in cleaned and "#eNq" not in cleaned
    assert "play.vuejs.org" in cleaned  # the host stays: "a playground link was given"
    assert "_No response_" not in cleaned
    for empty_heading in ("What is expected?", "System Info", "Any additional comments?"):
        assert empty_heading not in cleaned
    assert "###" not in cleaned
    assert "Steps to reproduce" in cleaned and "Vue version\n3.4.37" in cleaned  # heading words with content stay
    assert len(cleaned) < len(VUE_ISSUE) / 3


def test_babel_template_keeps_code_and_error_but_not_its_boilerplate() -> None:
    cleaned = clean_question_text(BABEL_ISSUE)
    assert "Would you like to work on a fix?" not in cleaned
    assert "💻" not in cleaned and "_No response_" not in cleaned
    assert "code_lz" not in cleaned and "MYewdgzgLg" not in cleaned and "browsers=defaults" not in cleaned
    assert "REPL (babel.dev/repl)" in cleaned  # the link's text and a short form of its address
    assert "Configuration file name\npackage.json" in cleaned
    assert "Possible solution" not in cleaned and "\nConfiguration\n" not in cleaned
    assert "Programmatic API (`babel.transform`, `babel.parse`)" in cleaned
    assert "> SyntaxError: 'await' is not allowed in async function parameters." in cleaned
    code = BABEL_ISSUE[BABEL_ISSUE.index("```js") : BABEL_ISSUE.index("```\n\nHere") + 3]
    assert code in cleaned


def test_html_comments_and_emoji_go_prose_stays() -> None:
    cleaned = clean_question_text(AXIOS_COMMENT)
    assert "Please read and follow" not in cleaned and "⚠" not in cleaned and "<!--" not in cleaned
    assert cleaned.startswith("The timeoutErrorMessage property in config not work with Node.js\n")
    assert 'Upgrading from 0.26.1 to 0.27.2 cause: got "timeout of *ms exceeded"' in cleaned


def test_code_blocks_stack_traces_and_identifiers_survive_byte_for_byte() -> None:
    code = (
        "```python\n"
        "Traceback (most recent call last):\n"
        '  File "/app/views.py", line 12, in get\n'
        "    return   QuerySet.filter(pk=__id__)   # http://example.com/#payload?x=1\n"
        "TypeError: 'NoneType' object is not callable\n"
        "```"
    )
    question = (
        "## withStripeBackoff retries forever\n"
        f"Calling `withStripeBackoff(fn, {{ retries: 0 }})` in @acme/payments-core loops.\n\n{code}\n\n"
        "- [ ] `retryPolicy.maxAttempts` is ignored\n"
        "- [x] calls to_snake_case() twice\n"
        "ValueError: invalid literal for int() with base 10: 'abc'\n"
    )
    cleaned = clean_question_text(question)
    assert code in cleaned  # whitespace, the comment's URL and all, unchanged
    assert "Calling `withStripeBackoff(fn, { retries: 0 })` in @acme/payments-core loops." in cleaned
    assert "- [ ] `retryPolicy.maxAttempts` is ignored" in cleaned  # a task line with code is content
    assert "- [x] calls to_snake_case() twice" in cleaned  # ... and one with an identifier
    assert "ValueError: invalid literal for int() with base 10: 'abc'" in cleaned
    assert cleaned.startswith("withStripeBackoff retries forever\n")


def test_an_unclosed_fence_keeps_the_rest_as_code() -> None:
    question = "Crash\n```js\nfetch('https://api.example.com/v1?token=abc')\n### not a heading\n_No response_"
    assert clean_question_text(question) == question


def test_plain_titles_are_unchanged() -> None:
    titles = [
        "<div>{ new String('hi') }</div> renders blank",
        "[Bug]: Function Statements Require a Function Name",
        "Incorrect translation of xlink:href attribute -> hhref",
        "element with `contentEditable=undefined` crashes in Preact but not React",
        "QuerySet.none() on combined queries returns all results.",
        "Add support for bigint.",
        "# where is the retry helper?",  # only a heading: its words are the question
    ]
    for title in titles[:-1]:
        assert clean_question_text(title) == title
    assert clean_question_text(titles[-1]) == "where is the retry helper?"
    assert clean_question_text("  \n ") == ""


@pytest.mark.parametrize(
    ("url", "short"),
    [
        (f"https://play.vuejs.org/#{PAYLOAD}", "play.vuejs.org"),
        (
            "https://github.com/preactjs/preact/blob/c7f57db13af43b8cc3353a138639ad9dd9523e16/src/diff/props.js#L109",
            "github.com/src/diff/props.js",
        ),
        (
            "https://codesandbox.io/s/preact-tabindex-reset-fgljk?file=/src/index.js",
            "codesandbox.io/s/preact-tabindex-reset-fgljk",
        ),
        ("https://jsfiddle.net/7xwu6c49/1/", "jsfiddle.net"),
        (
            "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/progress",
            "developer.mozilla.org/Web/HTML/Element/progress",
        ),
        ("not a url", "not a url"),
    ],
)
def test_urls_shrink_to_host_and_readable_words(url: str, short: str) -> None:
    assert shorten_url(url) == short


def test_images_go_link_text_stays() -> None:
    question = (
        "Broken focus\n"
        '<img width="1231" alt="image" src="https://user-images.githubusercontent.com/1167/173198958-c27bdc4f.png">\n'
        "![image](https://github.com/immutable-js/immutable-js/assets/3616772/f9ccba26-8096-451e-bf7e.png)\n"
        "See [this suspicious regex](https://github.com/preactjs/preact/blob/c7f57db13af4/src/diff/props.js#L109)"
    )
    assert clean_question_text(question) == "Broken focus\nSee this suspicious regex (github.com/src/diff/props.js)"


def test_dunders_powers_and_symbols_are_not_markdown() -> None:
    for title in [
        "ResolverMatch.__repr__() doesn't handle functools.partial() nicely.",
        "@ (__matmul__) should fail if one argument is not a matrix",
        "Inconsistency when simplifying (-a)**x * a**(-x), a a positive integer",
        "f(*args, **kwargs) loses **kwargs",
        "rotate by 90° keeps the © header",
    ]:
        assert clean_question_text(title) == title
    assert clean_question_text("This is **really** broken 🚀") == "This is really broken"


def test_comment_lines_of_unfenced_code_are_kept_and_comments_in_code_blocks_too() -> None:
    question = "Crash on save\n\n# create the model\n# with a field\nm = Model(x=1)\n# then save\n"
    assert clean_question_text(question) == "Crash on save\ncreate the model\nwith a field\nm = Model(x=1)\nthen save"
    html = "Comment lost\n```html\n<template><!-- keep me --><div/></template>\n```\n<!-- but not me -->"
    assert clean_question_text(html) == "Comment lost\n```html\n<template><!-- keep me --><div/></template>\n```"


def test_the_text_embedder_reads_the_cleaned_question_and_round_trips_the_switch() -> None:
    from haystack_integrations.components.code_alias.retrieval.embedders import CodeTextEmbedder

    assert CodeTextEmbedder().clean_question is False  # off by default
    embedder = CodeTextEmbedder(clean_question=True)
    assert embedder.text_to_embed(VUE_ISSUE) == clean_question_text(VUE_ISSUE) != VUE_ISSUE
    assert embedder.text_to_embed("where is the retry helper?") == "where is the retry helper?"
    off = CodeTextEmbedder.from_dict(CodeTextEmbedder(clean_question=False).to_dict())
    assert off.clean_question is False and off.text_to_embed(VUE_ISSUE) == VUE_ISSUE
    assert CodeTextEmbedder.from_dict(embedder.to_dict()).clean_question is True
