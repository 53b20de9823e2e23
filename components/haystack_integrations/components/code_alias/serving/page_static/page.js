// The code-alias search page: completions as you type (dictionary only), the answer on Enter, results first.
// Everything from the server is put in the page as text (textContent), never as HTML.
"use strict";

(function () {
  const DEBOUNCE_MS = 120;
  const COMPLETIONS = 8;
  const WEAK_RESULTS = 3;
  const LINK_SCHEMES = ["http:", "https:", "vscode:", "vscode-insiders:", "idea:", "jetbrains:", "file:"];
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
  let info = null; // GET /page/info
  let asking = null; // {question, controller} of the ask in flight: a repeated submit of it is ignored
  let lastAnswer = null;

  // A token given once as #token=... is kept for this tab and taken out of the address bar.
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    token = fragment.get("token");
    sessionStorage.setItem("code-alias-token", token);
    history.replaceState(history.state, "", location.pathname + location.search);
  }

  class ServerError extends Error {
    constructor(message, statusCode) {
      super(message);
      this.statusCode = statusCode;
    }
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
      throw new ServerError("this server needs its API token", 401);
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof data.detail === "string" ? data.detail : (data.detail || []).map((d) => d.msg).join("; ");
      throw new ServerError(detail || "the server answered " + response.status, response.status);
    }
    return data;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  // ---- links to the code: the person's choice (kept in this browser), else the server's default ------------------
  function linkSettings() {
    let saved = {};
    try {
      saved = JSON.parse(localStorage.getItem("code-alias-links") || "{}") || {};
    } catch (error) {
      saved = {};
    }
    return saved;
  }

  function linkTemplate() {
    const saved = linkSettings();
    const presets = (info && info.links && info.links.presets) || {};
    if (saved.kind && saved.kind !== "web" && presets[saved.kind]) return presets[saved.kind];
    if (saved.kind === "web" && saved.template) return saved.template;
    return (info && info.links && info.links.default) || presets.vscode || "vscode://file{abs}:{line}";
  }

  function mappedPath(absolute) {
    const saved = linkSettings();
    if (!absolute || !saved.from || !saved.to || !absolute.startsWith(saved.from)) return absolute;
    return saved.to.replace(/\/+$/, "") + absolute.slice(saved.from.replace(/\/+$/, "").length);
  }

  function encodePath(path) {
    return path.split("/").map(encodeURIComponent).join("/");
  }

  function codeLink(item, path, line) {
    const template = linkTemplate();
    const absolute = mappedPath(item.editor_path);
    if (template.includes("{abs}") && !absolute) return null;
    const href = template
      .split("{abs}").join(encodePath(absolute || ""))
      .split("{path}").join(encodePath(path))
      .split("{line}").join(String(line || 1))
      .split("{repo}").join(encodeURIComponent(item.repo || ""));
    const scheme = (/^[a-z][a-z0-9+.-]*:/i.exec(href) || [""])[0].toLowerCase();
    return LINK_SCHEMES.includes(scheme) ? href : null;
  }

  function editorLink(item, text, className) {
    const href = codeLink(item, item.file_path, item.start_line || item.line);
    const link = el(href ? "a" : "code", text, className);
    if (href) {
      link.href = href;
      link.title = "Open " + location_(item);
    }
    return link;
  }

  function setupLinks() {
    const saved = linkSettings();
    const presets = (info && info.links && info.links.presets) || {};
    const fallback = (info && info.links && info.links.default) || "";
    const kind = saved.kind || Object.keys(presets).find((name) => presets[name] === fallback) || "web";
    $("link-kind").value = kind;
    $("link-template").value = saved.template || (kind === "web" ? fallback : "");
    const roots = (info && info.roots) || {};
    $("map-from").value = saved.from || roots[""] || Object.values(roots)[0] || "";
    $("map-to").value = saved.to || "";
    showTemplate();
  }

  function showTemplate() {
    const web = $("link-kind").value === "web";
    $("link-template").hidden = !web;
    $("link-template-label").hidden = !web;
  }

  function saveLinks() {
    const from = $("map-from").value.trim();
    const to = $("map-to").value.trim();
    const settings = { kind: $("link-kind").value, template: $("link-template").value.trim(), from, to };
    localStorage.setItem("code-alias-links", JSON.stringify(settings));
    showTemplate();
    if (lastAnswer) render(lastAnswer);
  }

  ["link-kind", "link-template", "map-from", "map-to"].forEach((id) => $(id).addEventListener("change", saveLinks));

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

  // The completion's name with the part that matches what was typed in bold.
  function matchedName(name, typed) {
    const node = el("span", null, "name");
    const at = typed ? name.toLowerCase().indexOf(typed.toLowerCase()) : -1;
    if (at < 0) {
      node.textContent = name;
      return node;
    }
    node.append(name.slice(0, at), el("b", name.slice(at, at + typed.length)), name.slice(at + typed.length));
    return node;
  }

  function showCompletions(completions, typed) {
    list.replaceChildren();
    options = completions.map((item, i) => {
      const option = el("li", null, "option");
      option.id = "completion-" + i;
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", "false");
      option.dataset.name = item.name;
      option.dataset.kind = item.symbol_kind || item.kind;
      option.append(matchedName(item.name, typed), el("span", item.symbol_kind || item.kind, "kind"));
      const file = item.files && item.files[0];
      const where = file ? file + (item.line ? ":" + item.line : "") : item.package || "";
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
        if (mine === sequence) showCompletions(data.result.completions || [], prefix);
      })
      .catch((error) => {
        if (error.name !== "AbortError" && mine === sequence) closeList();
      });
  }

  // Choosing a completion asks about that symbol: the question becomes its name.
  function choose(index) {
    input.value = options[index].dataset.name;
    closeList();
    ask(input.value);
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

  // ---- code: syntax colours across lines, the question's matches marked ---------------------------------------
  const KEYWORDS = new Set(
    ("def class return if elif else for while try except finally with as import from async await function const " +
      "let var new throw catch export interface type extends implements public private protected static readonly " +
      "fn pub struct impl enum match mod use func package defer go nil null None True False true false self this " +
      "yield lambda in not and or is break continue switch case default void raise pass")
      .split(" ")
  );
  const HASH_COMMENTS = new Set(["python", "ruby", "bash", "shell", "yaml", "toml", "perl", "r"]);

  // Tokens of one line as [start, end, class], and the open string or comment it leaves to the next line.
  function tokenize(text, language, open) {
    const tokens = [];
    let at = 0;
    if (open) {
      const end = text.indexOf(open.close);
      if (end < 0) return { tokens: [[0, text.length, open.kind]], open };
      tokens.push([0, end + open.close.length, open.kind]);
      at = end + open.close.length;
    }
    const hash = HASH_COMMENTS.has(language);
    const pattern = hash
      ? /(#.*$)|("""|''')|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(\b\d[\w.]*)|([A-Za-z_$][\w$]*)/g
      : /(\/\/.*$)|(\/\*|`)|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(\b\d[\w.]*)|([A-Za-z_$][\w$]*)/g;
    pattern.lastIndex = at;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      const start = match.index;
      if (match[1]) tokens.push([start, start + match[0].length, "comment"]);
      else if (match[2]) {
        const close = match[2] === "/*" ? "*/" : match[2];
        const kind = match[2] === "/*" ? "comment" : "string";
        const end = text.indexOf(close, start + match[2].length);
        if (end < 0) {
          tokens.push([start, text.length, kind]);
          return { tokens, open: { close, kind } };
        }
        tokens.push([start, end + close.length, kind]);
        pattern.lastIndex = end + close.length;
      } else if (match[3]) tokens.push([start, start + match[0].length, "string"]);
      else if (match[4]) tokens.push([start, start + match[0].length, "number"]);
      else if (KEYWORDS.has(match[5])) tokens.push([start, start + match[0].length, "keyword"]);
    }
    return { tokens, open: null };
  }

  // One line's nodes: text cut at every token and match boundary, tokens coloured, matches in <mark>.
  function lineNodes(text, tokens, marks) {
    const cuts = new Set([0, text.length]);
    tokens.concat(marks).forEach(([start, end]) => {
      cuts.add(Math.max(0, Math.min(text.length, start)));
      cuts.add(Math.max(0, Math.min(text.length, end)));
    });
    const points = Array.from(cuts).sort((a, b) => a - b);
    const nodes = [];
    for (let i = 0; i + 1 < points.length; i++) {
      const [start, end] = [points[i], points[i + 1]];
      if (start === end) continue;
      const token = tokens.find(([s, e]) => s <= start && end <= e);
      const mark = marks.find(([s, e]) => s <= start && end <= e);
      let node = token ? el("span", text.slice(start, end), "tok-" + token[2]) : document.createTextNode(text.slice(start, end));
      if (mark) {
        const wrapper = el("mark", null, mark[2] === "symbol" ? "m-symbol" : "m-word");
        wrapper.append(node);
        node = wrapper;
      }
      nodes.push(node);
    }
    return nodes;
  }

  function codeBlock(code) {
    const pre = el("pre", null, "code");
    const [first, last] = code.window || [0, code.lines.length - 1];
    let open = null;
    let previous = null;
    let extra = 0;
    code.lines.forEach(([number, text, marks], row) => {
      const hidden = row < first || row > last;
      if (previous !== null && number !== previous + 1) {
        const gap = el("span", null, "line elision" + (hidden || row === first ? " extra" : ""));
        const left = number - previous - 1;
        gap.append(el("span", "\u22ee", "number"), el("span", left + (left === 1 ? " line" : " lines") + " not shown", "text"));
        pre.append(gap);
        open = null; // what is left out is whole definitions: nothing stays open across it
      }
      const line = el("span", null, "line" + (hidden ? " extra" : ""));
      line.dataset.line = String(number);
      const lexed = tokenize(text, code.language || "", open);
      open = lexed.open;
      const body = el("span", null, "text");
      body.append(...lineNodes(text || " ", lexed.tokens, marks || []));
      line.append(el("span", number, "number"), body);
      pre.append(line);
      if (hidden) extra++;
      previous = number;
    });
    if (code.complete === false) {
      const gap = el("span", null, "line elision");
      gap.append(el("span", "\u22ee", "number"), el("span", "re-index to see the rest of this definition", "text"));
      pre.append(gap);
    }
    return { pre, extra };
  }

  // ---- the answer ------------------------------------------------------------------------------------------------
  function location_(item) {
    const line = item.start_line || item.line;
    return line ? item.file_path + ":" + line : item.file_path;
  }

  function copyButton(text) {
    const button = el("button", "Copy", "copy small");
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

  function symbolItem(item, others, weak) {
    const li = el("li", null, "symbol" + (weak ? " weak" : ""));
    // Which definition this is, for scripts that add to it (graph.js: its callers and callees).
    li.dataset.qualifiedName = item.qualified_name || "";
    li.dataset.filePath = item.file_path || "";
    if (item.repo) li.dataset.repo = item.repo;
    const head = el("div", null, "head");
    const name = el("span", item.display_name || item.qualified_name, "qualified");
    name.title = item.qualified_name;
    head.append(name, el("span", item.kind || "symbol", "kind"));
    if (weak) head.append(el("span", "weak", "badge"));
    head.append(editorLink(item, location_(item), "open"), copyButton(location_(item)));
    const why = el("p", item.reason || item.why_words, "why");
    why.title = item.why_words || "";
    li.append(head, why);
    if (item.code && item.code.lines && item.code.lines.length) {
      const { pre, extra } = codeBlock(item.code);
      li.append(pre);
      if (extra) {
        const more = el("button", "Show more (" + extra + " lines)", "more small");
        more.type = "button";
        more.setAttribute("aria-expanded", "false");
        more.addEventListener("click", () => {
          const open = pre.classList.toggle("expanded");
          more.textContent = open ? "Show less" : "Show more (" + extra + " lines)";
          more.setAttribute("aria-expanded", open ? "true" : "false");
        });
        li.append(more);
      }
    }
    if (others.length) {
      const folded = el("details", null, "folded");
      const file = (item.file_path || "").split("/").pop();
      folded.append(el("summary", "+" + others.length + " more in " + file));
      const inner = el("ul");
      others.forEach((other) => {
        const row = el("li");
        row.append(el("code", other.display_name || other.qualified_name), " ", editorLink(other, location_(other), "open"));
        inner.append(row);
      });
      folded.append(inner);
      li.append(folded);
    }
    return li;
  }

  function renderSymbols(answer) {
    const box = $("symbols");
    box.replaceChildren();
    const symbols = answer.symbols || [];
    let groups = answer.groups || symbols.map((_, i) => [i]);
    const weak = answer.abstained === true;
    if (weak) groups = groups.slice(0, WEAK_RESULTS);
    if (!symbols.length) {
      box.append(el("li", "No definition answers this; try other words or a name from the code.", "empty"));
    }
    groups.forEach((group) => {
      box.append(symbolItem(symbols[group[0]], group.slice(1).map((i) => symbols[i]), weak));
    });
    $("weak").hidden = !weak;
  }

  function renderRewrite(rewrite) {
    const chips = $("rewrite-chips");
    chips.replaceChildren();
    const used = rewrite.meta ? rewrite.meta.used !== false : true;
    if (!used) chips.append("off");
    else if (!rewrite.symbols.length && !rewrite.packages.length) chips.append("no names");
    rewrite.symbols.concat(rewrite.packages).forEach((name) => chips.append(el("code", name)));
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
    add("Intent", rewrite.intent ? [rewrite.intent] : []);
    add("Dropped", (rewrite.dropped || []).map((d) => (d.name || "?") + (d.reason ? " (" + d.reason + ")" : "")));
  }

  function renderFiles(files) {
    const box = $("files");
    box.replaceChildren();
    files.forEach((file) => {
      const li = el("li", null, "file");
      li.append(editorLink(file, file.file_path, "open"));
      const names = (file.hits || []).map((hit) => hit.symbol).filter(Boolean);
      if (names.length) li.append(el("span", names.join(", "), "hits"));
      box.append(li);
    });
  }

  function render(answer) {
    renderSymbols(answer);
    renderRewrite(answer.rewrite);
    renderFiles(answer.files || []);
  }

  // ---- asking: the URL holds the question; one request per question; errors replace the answer ---------------
  function showError(error) {
    let title = "The search failed";
    let hint = "Try again in a moment.";
    const code = error.statusCode;
    if (!code) {
      title = "The code-alias server does not answer";
      hint = "Is `code-alias serve` still running? Start it again, then press Enter to ask again.";
    } else if (code === 401) {
      title = "This server needs its API token";
      hint = "Paste the token above (CODE_ALIAS_API_TOKEN of the server), then ask again.";
    } else if (code === 404) {
      title = "There is no index to search";
      hint = "Build it with `code-alias index PATH` on the server's machine, then ask again.";
    } else if (code === 422 || code === 400) {
      title = "The server cannot answer this question as written";
      hint = "Change the question (or the filters) and ask again.";
    } else if (code === 503) {
      title = "The index cannot be used right now";
      hint = "The server may be loading or re-indexing; ask again in a moment.";
    } else if (code >= 500) {
      title = "The server failed on this question";
      hint = "Its log has the details; ask again, or ask another way.";
    }
    $("answer").hidden = true;
    $("answer").classList.remove("stale");
    $("error-title").textContent = title;
    $("error-detail").textContent = error.message && code ? error.message : "";
    $("error-hint").textContent = hint;
    $("error").hidden = false;
    status.textContent = "";
  }

  function setUrl(question, push) {
    const params = new URLSearchParams();
    params.set("q", question);
    if ($("repo").value) params.set("repo", $("repo").value);
    if ($("package").value) params.set("package", $("package").value);
    const url = location.pathname + "?" + params.toString();
    if (push) history.pushState({ q: question }, "", url);
    else history.replaceState({ q: question }, "", url);
  }

  async function ask(text, { push = true } = {}) {
    const question = (text === undefined ? input.value : text).trim();
    if (!question) return;
    const filters = $("repo").value + "\u0000" + $("package").value;
    if (asking && asking.question === question && asking.filters === filters) return; // already on its way
    if (asking) asking.controller.abort();
    // Completions still on their way for what was typed would open over the answer: they are dropped.
    clearTimeout(timer);
    if (pending) pending.abort();
    sequence += 1;
    closeList();
    const mine = { question, filters, controller: new AbortController() };
    asking = mine;
    setUrl(question, push);
    document.title = question + " \u2014 code-alias";
    $("answer").classList.add("stale");
    $("answer").setAttribute("aria-busy", "true");
    $("ask").textContent = "Searching\u2026";
    status.textContent = "Searching\u2026";
    const body = { question };
    if ($("repo").value) body.repo = $("repo").value;
    if ($("package").value) body.package = $("package").value;
    try {
      const answer = await call("POST", "/page/ask", body, mine.controller.signal);
      if (asking !== mine) return;
      lastAnswer = answer;
      render(answer);
      $("error").hidden = true;
      $("answer").hidden = false;
      const shown = answer.abstained ? Math.min(WEAK_RESULTS, (answer.groups || []).length) : (answer.groups || answer.symbols).length;
      status.textContent = (answer.abstained ? "No confident match \u00b7 " : "") + shown + " of " +
        answer.symbols.length + " symbols in " + Math.round(answer.seconds * 1000) + " ms";
    } catch (error) {
      if (error.name === "AbortError" || asking !== mine) return;
      showError(error);
    } finally {
      if (asking === mine) {
        asking = null;
        $("answer").classList.remove("stale");
        $("answer").removeAttribute("aria-busy");
        $("ask").textContent = "Ask";
      }
    }
  }

  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    ask();
  });

  window.addEventListener("popstate", (event) => {
    const question = (event.state && event.state.q) || new URLSearchParams(location.search).get("q");
    if (question) {
      input.value = question;
      ask(question, { push: false });
    }
  });

  // ---- filters and the token ---------------------------------------------------------------------------------
  function fill(select, label, names) {
    select.replaceChildren(el("option", "all"));
    select.firstChild.value = "";
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
      info = await call("GET", "/page/info");
      $("token-form").hidden = true;
      const repos = fill($("repo"), $("repo-label"), info.repositories);
      const packages = fill($("package"), $("package-label"), info.packages);
      $("filters").hidden = !(repos || packages);
      setupLinks();
      status.textContent = "";
      const params = new URLSearchParams(location.search);
      if (params.get("repo")) $("repo").value = params.get("repo");
      if (params.get("package")) $("package").value = params.get("package");
      if (params.get("q")) {
        input.value = params.get("q");
        ask(params.get("q"), { push: false });
      }
    } catch (error) {
      if (error.statusCode !== 401) showError(error);
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
