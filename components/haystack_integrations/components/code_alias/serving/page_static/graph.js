// The "callers · callees" toggle of each ranked symbol (issue 43; served by serving/graph_page.py).
// It adds a <details> to every symbol page.js renders (below its code) and, when opened, asks POST /page/graph for
// that one definition (the item's data-qualified-name, data-file-path and data-repo, which page.js writes).
// Everything from the server is put in the page as text (textContent), never as HTML.
"use strict";

(function () {
  const box = document.getElementById("symbols");
  if (!box) return;

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  async function ask(body) {
    const token = sessionStorage.getItem("code-alias-token") || "";
    const headers = { "content-type": "application/json" };
    if (token) headers.authorization = "Bearer " + token;
    const response = await fetch("/page/graph", { method: "POST", headers, body: JSON.stringify(body) });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : "the server answered " + response.status);
    return data;
  }

  function site(text, note) {
    const li = el("li");
    li.append(el("code", text));
    if (note) li.append(el("span", " " + note, "graph-note"));
    return li;
  }

  function render(panel, data) {
    const callers = (data.callers.targets || [])[0];
    const callees = (data.callees.targets || [])[0];
    panel.replaceChildren();
    if (!callers || !callees) return;
    const up = el("ul", null, "graph-callers");
    callers.callers.forEach((s) => up.append(site(s.file_path + ":" + s.line, s.caller.qualified_name + (s.test ? " (test)" : ""))));
    callers.ambiguous.forEach((s) => up.append(site(s.file_path + ":" + s.line, "may call it: " + s.reason)));
    if (!up.children.length) up.append(el("li", "No caller in the index."));
    const down = el("ul", null, "graph-callees");
    callees.callees.forEach((s) => down.append(site(s.callee.qualified_name, "line " + s.line)));
    callees.ambiguous.forEach((s) => down.append(site(s.name + "?", "one of " + s.candidates)));
    if (!down.children.length) down.append(el("li", "Calls nothing defined in the index."));
    panel.append(
      el("h3", "Callers (" + callers.total.callers + ", " + callers.total.ambiguous + " ambiguous)"), up,
      el("h3", "Callees (" + callees.total.callees + ", " + callees.total.ambiguous + " ambiguous)"), down
    );
  }

  function decorate(li) {
    if (li.querySelector("details.graph")) return;
    // page.js writes each symbol's definition on its item: the qualified name, the path in its repository, the repo.
    const name = li.dataset.qualifiedName;
    const filePath = li.dataset.filePath || "";
    if (!name) return;
    const details = el("details", null, "graph");
    const summary = el("summary", "callers · callees");
    const panel = el("div", null, "graph-panel");
    details.append(summary, panel);
    details.addEventListener("toggle", async () => {
      if (!details.open || panel.dataset.loaded) return;
      panel.dataset.loaded = "1";
      panel.replaceChildren(el("p", "Loading…"));
      try {
        const body = { name };
        if (filePath && !filePath.startsWith("/")) body.file_path = filePath;
        if (li.dataset.repo) body.repo = li.dataset.repo;
        render(panel, await ask(body));
      } catch (error) {
        panel.replaceChildren(el("p", "No graph answer: " + error.message));
        delete panel.dataset.loaded;
      }
    });
    li.append(details);
  }

  new MutationObserver(() => box.querySelectorAll("li.symbol").forEach(decorate)).observe(box, { childList: true });
})();
