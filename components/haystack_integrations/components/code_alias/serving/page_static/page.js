// The code-alias search page: completions as you type (dictionary only), the answer on Enter.
// Everything from the server is put in the page as text (textContent), never as HTML.
"use strict";

(function () {
  const DEBOUNCE_MS = 120;
  const COMPLETIONS = 8;
  const $ = (id) => document.getElementById(id);
  const input = $("q");
  const list = $("completions");
  const status = $("status");
  let token = sessionStorage.getItem("code-alias-token") || "";
  let timer = 0;
  let pending = null; // the AbortController of the completion request in flight
  let sequence = 0; // answers to older keystrokes are ignored
  let active = -1;
  let options = [];

  // A token given once as #token=... is kept for this tab and taken out of the address bar.
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    token = fragment.get("token");
    sessionStorage.setItem("code-alias-token", token);
    history.replaceState(null, "", location.pathname + location.search);
  }

  function headers() {
    const result = { "content-type": "application/json" };
    if (token) result.authorization = "Bearer " + token;
    return result;
  }

  async function call(method, path, body, signal) {
    const response = await fetch(path, {
      method,
      headers: headers(),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    if (response.status === 401) {
      $("token-form").hidden = false;
      $("token").focus();
      throw new Error("this server needs its API token");
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof data.detail === "string" ? data.detail : (data.detail || []).map((d) => d.msg).join("; ");
      throw new Error(detail || "the server answered " + response.status);
    }
    return data;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  // ---- completions -------------------------------------------------------------------------------------------
  function closeList() {
    list.hidden = true;
    list.replaceChildren();
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
    options = [];
  }

  function highlight(index) {
    options.forEach((option, i) => option.setAttribute("aria-selected", i === index ? "true" : "false"));
    active = index;
    if (index >= 0) {
      input.setAttribute("aria-activedescendant", options[index].id);
      options[index].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function showCompletions(completions) {
    list.replaceChildren();
    options = completions.map((item, i) => {
      const option = el("li", null, "option");
      option.id = "completion-" + i;
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", "false");
      option.dataset.name = item.name;
      option.append(el("span", item.name, "name"), el("span", item.kind, "kind"));
      const where = (item.files && item.files[0]) || item.package || "";
      if (where) option.append(el("span", where, "where"));
      option.addEventListener("mousedown", (event) => {
        event.preventDefault(); // keep the focus in the box
        choose(i);
      });
      return option;
    });
    list.append(...options);
    list.hidden = options.length === 0;
    input.setAttribute("aria-expanded", options.length ? "true" : "false");
    active = -1;
  }

  function lastWord(text) {
    const match = /[\w$.@/-]+$/.exec(text);
    return match ? match[0] : "";
  }

  function complete() {
    const prefix = lastWord(input.value);
    if (pending) pending.abort();
    if (prefix.length < 2) {
      closeList();
      return;
    }
    const mine = ++sequence;
    pending = new AbortController();
    call("POST", "/code_alias_autocomplete/run", { prefix: prefix.slice(0, 200), limit: COMPLETIONS }, pending.signal)
      .then((data) => {
        if (mine === sequence) showCompletions(data.result.completions || []);
      })
      .catch((error) => {
        if (error.name !== "AbortError" && mine === sequence) closeList();
      });
  }

  function choose(index) {
    const name = options[index].dataset.name;
    const word = lastWord(input.value);
    input.value = input.value.slice(0, input.value.length - word.length) + name;
    closeList();
    ask();
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(complete, DEBOUNCE_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && options.length) {
      event.preventDefault();
      highlight((active + 1) % options.length);
    } else if (event.key === "ArrowUp" && options.length) {
      event.preventDefault();
      highlight(active <= 0 ? options.length - 1 : active - 1);
    } else if (event.key === "Escape") {
      closeList();
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      choose(active);
    }
  });
  input.addEventListener("blur", () => setTimeout(closeList, 100));

  // ---- the answer --------------------------------------------------------------------------------------------
  function location_(item) {
    return item.start_line ? item.file_path + ":" + item.start_line : item.file_path;
  }

  function editorLink(item) {
    if (!item.editor_path) return null;
    const path = item.editor_path.split("/").map(encodeURIComponent).join("/");
    const link = el("a", location_(item), "open");
    link.href = "vscode://file" + (path.startsWith("/") ? "" : "/") + path + ":" + (item.start_line || 1);
    link.title = "Open " + location_(item) + " in VS Code";
    return link;
  }

  function copyButton(text) {
    const button = el("button", "Copy", "copy");
    button.type = "button";
    button.setAttribute("aria-label", "Copy " + text);
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch (error) {
        button.textContent = "Copy failed";
      }
      setTimeout(() => (button.textContent = "Copy"), 1500);
    });
    return button;
  }

  // A small highlighter, line by line (no library): comments, strings, numbers and keywords as text spans.
  const KEYWORDS = new Set(
    ("def class return if elif else for while try except finally with as import from async await function const " +
      "let var new throw catch export interface type extends implements public private protected static readonly " +
      "fn pub struct impl enum match mod use func package defer go nil null None True False true false self this " +
      "yield lambda in not and or is break continue switch case default void raise pass")
      .split(" ")
  );
  const HASH_COMMENTS = new Set(["python", "ruby", "bash", "shell", "yaml", "toml", "perl", "r"]);

  function highlighted(text, language) {
    const comment = HASH_COMMENTS.has(language) ? "#.*$" : "\\/\\/.*$|\\/\\*.*?(?:\\*\\/|$)";
    const token = new RegExp(
      "(" + comment + ")|(\"(?:[^\"\\\\]|\\\\.)*\"?|'(?:[^'\\\\]|\\\\.)*'?|`[^`]*`?)|(\\b\\d[\\w.]*)|([A-Za-z_$][\\w$]*)",
      "g"
    );
    const nodes = [];
    let last = 0;
    for (const match of text.matchAll(token)) {
      const kind = match[1] ? "comment" : match[2] ? "string" : match[3] ? "number" : KEYWORDS.has(match[4]) ? "keyword" : "";
      if (!kind) continue;
      if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
      nodes.push(el("span", match[0], "tok-" + kind));
      last = match.index + match[0].length;
    }
    if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
    return nodes;
  }

  function codeBlock(code) {
    const pre = el("pre", null, "code");
    for (let i = 0; i < code.lines.length; i++) {
      const line = el("span", null, "line");
      const text = el("span", null, "text");
      text.append(...highlighted(code.lines[i] || " ", code.language || ""));
      line.append(el("span", code.start_line + i, "number"), text);
      pre.append(line);
    }
    return pre;
  }

  function renderRewrite(rewrite) {
    const box = $("rewrite");
    box.replaceChildren();
    const add = (term, values) => {
      box.append(el("dt", term));
      const dd = el("dd");
      if (!values.length) dd.textContent = "none";
      values.forEach((value) => dd.append(el("code", value)));
      box.append(dd);
    };
    add("Rewritten", [rewrite.rewritten]);
    add("Symbols", rewrite.symbols);
    add("Packages", rewrite.packages);
    add("Dropped", (rewrite.dropped || []).map((d) => (d.name || "?") + (d.reason ? " (" + d.reason + ")" : "")));
  }

  function renderSymbols(symbols) {
    const box = $("symbols");
    box.replaceChildren();
    if (!symbols.length) box.append(el("li", "No definition answers this; try other words or a name from the code."));
    symbols.forEach((item) => {
      const li = el("li", null, "symbol");
      const head = el("div", null, "head");
      head.append(el("code", item.qualified_name, "qualified"), el("span", item.kind || "symbol", "kind"));
      const where = el("div", null, "where");
      where.append(editorLink(item) || el("code", location_(item)), copyButton(location_(item)));
      li.append(head, where, el("p", item.why_words, "why"));
      if (item.code) li.append(codeBlock(item.code));
      box.append(li);
    });
  }

  function renderFiles(files) {
    const box = $("files");
    box.replaceChildren();
    files.forEach((file) => {
      const li = el("li", null, "file");
      li.append(el("code", file.file_path));
      const names = (file.hits || []).map((hit) => hit.symbol).filter(Boolean);
      if (names.length) li.append(el("span", names.join(", "), "hits"));
      box.append(li);
    });
  }

  async function ask() {
    const question = input.value.trim();
    if (!question) return;
    closeList();
    status.textContent = "Searching...";
    const body = { question };
    if ($("repo").value) body.repo = $("repo").value;
    if ($("package").value) body.package = $("package").value;
    try {
      const answer = await call("POST", "/page/ask", body);
      renderRewrite(answer.rewrite);
      renderSymbols(answer.symbols);
      renderFiles(answer.files);
      $("answer").hidden = false;
      status.textContent = answer.symbols.length + " symbols in " + Math.round(answer.seconds * 1000) + " ms.";
    } catch (error) {
      status.textContent = "Error: " + error.message;
    }
  }

  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    ask();
  });

  // ---- filters and the token ---------------------------------------------------------------------------------
  function fill(select, label, names) {
    names.forEach((name) => {
      const option = el("option", name);
      option.value = name;
      select.append(option);
    });
    label.hidden = names.length < 2;
    return names.length >= 2;
  }

  async function loadInfo() {
    try {
      const info = await call("GET", "/page/info");
      $("token-form").hidden = true;
      const repos = fill($("repo"), $("repo-label"), info.repositories);
      const packages = fill($("package"), $("package-label"), info.packages);
      $("filters").hidden = !(repos || packages);
      status.textContent = "";
    } catch (error) {
      status.textContent = "Error: " + error.message;
    }
  }

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("code-alias-token", token);
    $("token").value = "";
    loadInfo();
    input.focus();
  });

  loadInfo();
})();
