"""Draw docs/architecture.svg: the package's folders as the stages of the two pipelines, and who calls whom.

Plain SVG written by hand (no plotting dependency), so the picture is text that diffs and reviews like code.
Run from the repository root after a folder changes: `python scripts/draw_architecture.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "docs" / "architecture.svg"
WIDTH, HEIGHT = 1120, 700

# One colour per kind of box: who calls in, the application, a pipeline stage, what the stages share, state on disk.
CLIENT, APP, STAGE, SHARED, STATE = "#e8eef7", "#fde9c8", "#dff0dc", "#ececec", "#f6e0e6"


@dataclass(frozen=True)
class Box:
    x: int
    y: int
    w: int
    h: int
    title: str
    lines: tuple[str, ...]
    fill: str

    @property
    def top(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y

    @property
    def bottom(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h

    @property
    def left(self) -> tuple[int, int]:
        return self.x, self.y + self.h // 2

    @property
    def right(self) -> tuple[int, int]:
        return self.x + self.w, self.y + self.h // 2


def box_svg(box: Box) -> str:
    parts = [
        f'<rect x="{box.x}" y="{box.y}" width="{box.w}" height="{box.h}" rx="8" fill="{box.fill}" stroke="#555"/>',
        f'<text x="{box.x + 10}" y="{box.y + 21}" class="title">{escape(box.title)}</text>',
    ]
    for number, line in enumerate(box.lines):
        parts.append(f'<text x="{box.x + 10}" y="{box.y + 40 + 16 * number}">{escape(line)}</text>')
    return "\n".join(parts)


def arrow(start: tuple[int, int], end: tuple[int, int], label: str = "", dashed: bool = False) -> str:
    style = ' stroke-dasharray="5,4"' if dashed else ""
    svg = (
        f'<line x1="{start[0]}" y1="{start[1]}" x2="{end[0]}" y2="{end[1]}" stroke="#333" stroke-width="1.6"'
        f' marker-end="url(#head)"{style}/>'
    )
    if label:
        x, y = (start[0] + end[0]) // 2 + 6, (start[1] + end[1]) // 2 - 4
        svg += f'\n<text x="{x}" y="{y}" class="label">{escape(label)}</text>'
    return svg


# Each box's text: its title, then its lines separated by "|".
TEXT = {
    "cli": "cli.py|code-alias index / ask /|dict / callers / bench",
    "serving": "serving/  (transports only)|REST + MCP (code-alias serve), search page,|"
    "OpenAI-style chat, Hayhooks wrappers, warm server",
    "evaluation": "evaluation/|bench harness: golden sets,|metrics, reports",
    "own": "your own Haystack code|Pipeline.loads(pipelines/*.yml),|or the 3 components alone",
    "app": "app/  (the application layer)|"
    "CodeSearch: index a repository, ask it; one pydantic AskRequest (every limit and rule once),|"
    "one answer model serialised once, one 'why' vocabulary from the evidence records; sync on push",
    "pipes": "pipelines/*.yml|loaded by app/: indexing*.yml,|query*.yml, elasticsearch_*",
    "indexing": "indexing/  (indexing pipeline)|CodeFileReader -> AliasDictionaryBuilder|"
    "-> IndexSyncPlanner -> CodeSplitter|-> CodeDocumentEmbedder -> IndexSyncWriter|"
    "CodeIndex (one folder's live state)",
    "folder": ".code-alias/  (the index folder)|dictionary JSON, chunks, vectors, cards,|"
    "manifest.json swapped atomically",
    "rewriting": "rewriting/|hints/: the hint lookup|  (index, evidence, places)|ConstrainedQueryRewriter|"
    "SymbolFaithfulnessFilter",
    "retrieval": "retrieval/|CodeBM25Retriever|CodeEmbeddingRetriever|SymbolDefinitionRetriever|question embedder",
    "ranking": "ranking/|CodeRanker: candidates,|features, two fitted|LambdaMART models,|confidence, abstained",
    "core": "core/  (only what several stages share)|identifiers, symbol extraction, manifests, walker, model,|"
    "reference graph, hint records, file lock; no Haystack imports",
    "elastic": "elasticsearch/|the same stages on|Elasticsearch 8 (store,|mapping, retrievers)",
    "config": "config/  (fitted and hand-kept data)|ranking_model.json, hint_calibration.json, abbreviations.yaml",
}
# Each box's place and colour: x, y, width, height, fill.
PLACES = {
    "cli": (20, 50, 190, 70, CLIENT),
    "serving": (225, 50, 380, 70, CLIENT),
    "evaluation": (620, 50, 230, 70, CLIENT),
    "own": (865, 50, 235, 70, CLIENT),
    "app": (20, 170, 830, 70, APP),
    "pipes": (865, 170, 235, 70, STATE),
    "indexing": (20, 300, 330, 120, STAGE),
    "folder": (20, 470, 330, 86, STATE),
    "rewriting": (400, 300, 225, 120, STAGE),
    "retrieval": (650, 300, 210, 120, STAGE),
    "ranking": (885, 300, 215, 120, STAGE),
    "core": (400, 470, 460, 86, SHARED),
    "elastic": (935, 470, 165, 86, SHARED),
    "config": (400, 600, 460, 60, STATE),
}


def make_box(name: str) -> Box:
    x, y, w, h, fill = PLACES[name]
    title, *lines = TEXT[name].split("|")
    return Box(x, y, w, h, title, tuple(lines), fill)


def drawing() -> str:
    box = {name: make_box(name) for name in PLACES}
    cli, serving, evaluation, own, app, pipes = (
        box[n] for n in ("cli", "serving", "evaluation", "own", "app", "pipes")
    )
    indexing, folder, rewriting, retrieval = (box[n] for n in ("indexing", "folder", "rewriting", "retrieval"))
    ranking, core, config = box["ranking"], box["core"], box["config"]
    arrows = [
        arrow(cli.bottom, (cli.bottom[0], app.y)),
        arrow(serving.bottom, (serving.bottom[0], app.y)),
        arrow(evaluation.bottom, (evaluation.bottom[0], app.y)),
        arrow(own.bottom, pipes.top),
        arrow(pipes.left, app.right),
        arrow((indexing.top[0], app.y + app.h), indexing.top, "index"),
        arrow((rewriting.top[0] + 40, app.y + app.h), (rewriting.top[0] + 40, rewriting.y), "ask"),
        arrow(indexing.bottom, folder.top, "writes"),
        arrow(rewriting.right, retrieval.left),
        arrow(retrieval.right, ranking.left),
        arrow((ranking.x + 40, ranking.y), (app.x + app.w - 20, app.y + app.h), "answer"),
        arrow(folder.right, (rewriting.x, rewriting.y + rewriting.h - 10), "reads", dashed=True),
        arrow((core.x + 60, core.y), (core.x + 60, rewriting.y + rewriting.h), dashed=True),
        arrow((core.x + 330, core.y), (core.x + 330, retrieval.y + retrieval.h), dashed=True),
        arrow((config.x + config.w, config.y + 15), (ranking.x + 20, ranking.y + ranking.h), dashed=True),
    ]
    legend = (
        f'<text x="20" y="{HEIGHT - 20}" class="label">solid: calls or data flow; dashed: reads / imports. '
        "Green: a pipeline stage; orange: the application; blue: who calls in; grey: shared code; pink: data.</text>"
    )
    heading = (
        '<text x="20" y="30" class="heading">code-alias-haystack: the folders of '
        "components/haystack_integrations/components/code_alias/</text>"
    )
    body = "\n".join([heading, *(box_svg(one) for one in box.values()), *arrows, legend])
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"
 font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12.5">
<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">
<path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker>
<style>.title {{ font-weight: bold; font-size: 14px; }} .label {{ font-size: 11.5px; fill: #333; }}
.heading {{ font-weight: bold; font-size: 16px; }}</style></defs>
<rect width="100%" height="100%" fill="white"/>
{body}
</svg>
"""


def main() -> None:
    OUT.write_text(drawing(), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
