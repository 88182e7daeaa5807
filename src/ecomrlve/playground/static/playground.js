// The playground's only script: drives the episode page and the runs-file upload. No build step, no library.
"use strict";
(function () {
  const PREFIX = document.currentScript.dataset.prefix || "";
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function api(method, path, body, headers) {
    const init = { method, credentials: "same-origin", headers: headers || {} };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      if (!init.headers["content-type"]) init.headers["content-type"] = "application/json";
    }
    const response = await fetch(PREFIX + path, init);
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail || response.statusText);
      throw new Error(detail);
    }
    return data;
  }

  const pretty = (value) => JSON.stringify(value, null, 2);
  const rawJson = (value) => el("details", { class: "raw" }, el("summary", { text: "raw JSON" }), el("pre", { text: pretty(value) }));
  const fmt = (value) => (typeof value === "number" ? String(Math.round(value * 1000) / 1000) : String(value));

  // ---- forms generated from the tools' JSON schemas ------------------------------------------

  function nonNull(schema) {
    // {"anyOf": [X, {"type": "null"}]} is an optional X
    if (schema.anyOf) {
      const options = schema.anyOf.filter((s) => s.type !== "null");
      if (options.length === 1) return [Object.assign({}, options[0], { description: schema.description }), true];
    }
    return [schema, false];
  }

  function field(name, path, schema, required) {
    const [inner, nullable] = nonNull(schema);
    const optional = nullable || !required;
    const title = inner.description || schema.description || "";
    if (inner.type === "object" && inner.properties) {
      const fields = Object.entries(inner.properties).map(([key, sub]) =>
        field(key, path + "." + key, sub, (inner.required || []).includes(key)));
      const box = el("fieldset", { class: "nested" }, el("legend", { text: name + (optional ? "" : " *"), title }),
        fields.map((f) => f.node));
      return { node: box, read() {
        const out = {};
        for (const f of fields) { const v = f.read(); if (v !== undefined) out[f.name] = v; }
        return Object.keys(out).length || !optional ? out : undefined;
      }, name };
    }
    let input;
    let parse;
    if (inner.enum || inner.type === "boolean") {
      const values = inner.enum || [true, false];
      input = el("select", { name: path }, optional || inner.type === "boolean" ? el("option", { value: "", text: "" }) : null,
        values.map((v) => el("option", { value: JSON.stringify(v), text: String(v) })));
      if (schema.default !== undefined && schema.default !== null) input.value = JSON.stringify(schema.default);
      parse = (text) => (text === "" ? undefined : JSON.parse(text));
    } else if (inner.type === "integer" || inner.type === "number") {
      input = el("input", { name: path, type: "number", step: inner.type === "integer" ? "1" : "any",
        min: inner.minimum, max: inner.maximum, placeholder: schema.default !== undefined && schema.default !== null ? "default " + schema.default : "" });
      parse = (text) => (text === "" ? undefined : Number(text));
    } else if (inner.type === "array") {
      input = el("input", { name: path, type: "text", placeholder: "comma separated" });
      const numeric = inner.items && (inner.items.type === "integer" || inner.items.type === "number");
      parse = (text) => {
        const items = text.split(",").map((s) => s.trim()).filter((s) => s);
        return items.length || !optional ? items.map((s) => (numeric ? Number(s) : s)) : undefined;
      };
    } else {
      input = el("input", { name: path, type: "text", placeholder: schema.default ? "default " + schema.default : "" });
      parse = (text) => (text === "" ? undefined : text);
    }
    const label = el("label", { title }, name + (optional ? "" : " *"), input);
    return { node: label, name, read: () => parse(input.value) };
  }

  // ---- how tool results look to people --------------------------------------------------------

  function variantsText(variants) {
    if (variants && !Array.isArray(variants)) {  // compact: {variant_id: value}
      variants = Object.entries(variants).map(([id, value]) => ({ variant_id: id, value: value }));
    }
    return (variants || []).map((v) => {
      const attrs = Object.entries(v).filter(([k]) => k !== "variant_id").map(([, x]) => x).join("/");
      return v.variant_id + (attrs ? " (" + attrs + ")" : "");
    }).join(", ");
  }

  function productTable(cards) {
    return el("div", { class: "scroll" }, el("table", { class: "cards" },
      el("thead", {}, el("tr", {}, ["id", "title", "price", "rating", "stock", "variants"].map((h) => el("th", { text: h })))),
      el("tbody", {}, cards.map((c) => el("tr", {},
        el("td", {}, el("code", { text: c.product_id })), el("td", { text: c.title }),
        el("td", { class: "num", text: c.price !== undefined ? "$" + c.price : "" }),
        el("td", { class: "num", text: c.rating !== undefined ? c.rating + (c.rating_count ? " (" + c.rating_count + ")" : "") : "" }),
        el("td", { class: "num", text: c.stock !== undefined ? c.stock : (c.in_stock === false ? "0" : "") }),
        el("td", { text: variantsText(c.variants) }))))));
  }

  const LINE_KEYS = ["line_id", "product_id", "title", "quantity", "unit_price", "variant_id"];

  function lineVariant(l) {  // a cart line's variant: its id and the one other key (the attribute's value)
    if (!l.variant_id) return null;
    return Object.fromEntries(Object.entries(l).filter(([k]) => k === "variant_id" || !LINE_KEYS.includes(k)));
  }

  function cartTable(cart) {
    return el("div", { class: "scroll" }, el("table", { class: "cards" },
      el("thead", {}, el("tr", {}, ["line", "product", "title", "qty", "unit price", "variant"].map((h) => el("th", { text: h })))),
      el("tbody", {}, (cart.lines || []).map((l) => el("tr", {},
        el("td", {}, el("code", { text: l.line_id })), el("td", {}, el("code", { text: l.product_id })), el("td", { text: l.title || "" }),
        el("td", { class: "num", text: l.quantity }), el("td", { class: "num", text: l.unit_price !== undefined ? "$" + l.unit_price : "" }),
        el("td", { text: lineVariant(l) ? variantsText([lineVariant(l)]) : "" }))))),
      cart.total !== undefined ? el("p", { class: "muted", text: "total $" + fmt(cart.total) }) : null);
  }

  function keyValues(result) {
    return el("table", { class: "kv" }, Object.entries(result).map(([k, v]) =>
      el("tr", {}, el("th", { text: k }), el("td", { text: typeof v === "object" ? JSON.stringify(v) : String(v) }))));
  }

  function renderResult(name, result) {
    if (result === null || typeof result !== "object") return el("pre", { text: String(result) });
    if (result.error) return el("p", { class: "error", text: result.error + ": " + (result.message || "") });
    let cards = result.results || result.viewed || (result.product_id && result.title ? [result] : null);
    if (cards && Array.isArray(cards.rows) && Array.isArray(cards.columns)) {  // compact: a table of cards
      const table = cards;
      cards = table.rows.map((row) => Object.assign({}, table.same || {},
        Object.fromEntries(table.columns.map((column, i) => [column, row[i]]))));
    }
    if (Array.isArray(cards)) return cards.length ? productTable(cards) : el("p", { class: "muted", text: "no products" });
    if (Array.isArray(result.lines)) return cartTable(result);
    if (Array.isArray(result.orders)) {
      return el("ul", {}, result.orders.map((o) => el("li", { text: Object.entries(o).filter(([, v]) => typeof v !== "object").map(([k, v]) => k + ": " + v).join(" · ") })));
    }
    return keyValues(result);
  }

  function callText(call) {
    const fn = call.function || call;
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments);
    return fn.name + "(" + args + ")";
  }

  function renderMessage(m) {
    if (m.role === "system") return el("details", { class: "msg system" }, el("summary", { text: "System prompt" }), el("pre", { text: m.content }));
    if (m.role === "tool") {
      let result;
      try { result = JSON.parse(m.content); } catch (e) { result = m.content; }
      return el("div", { class: "msg tool", "data-tool": m.name },
        el("div", { class: "who", text: "result of " + m.name }), renderResult(m.name, result), rawJson(result));
    }
    const who = m.role === "assistant" ? "you (agent)" : "shopper";
    return el("div", { class: "msg " + m.role }, el("div", { class: "who", text: who }),
      m.content ? el("div", { class: "text", text: m.content }) : null,
      (m.tool_calls || []).map((c) => el("div", { class: "call" }, el("code", { text: callText(c) }))));
  }

  function renderOutcome(view) {
    const box = $("outcome");
    if (!view.done) { box.hidden = true; box.replaceChildren(); return; }
    const reward = view.outcome.reward || {};
    const rows = ["r_task", "r_eff", "r_hall", "is_correct", "termination", "turns", "user_caused_turns", "t_max", "invalid_reason", "safety_violation"]
      .filter((k) => reward[k] !== null && reward[k] !== undefined)
      .map((k) => el("tr", {}, el("th", { text: k }), el("td", { "data-key": k, text: fmt(reward[k]) })));
    box.replaceChildren(
      el("h2", {}, "Episode over: r_total ", el("span", { id: "r-total", text: fmt(reward.r_total) })),
      el("table", { id: "reward", class: "kv" }, rows),
      el("h3", { text: "Why this verdict" }), el("pre", { id: "explanation", text: (view.outcome.explanation || []).join("\n") }),
      el("h3", { text: "Verifier details" }), el("pre", { id: "verifier", text: pretty(reward.task || {}) }),
      el("h3", { text: "Hidden goal (revealed)" }), el("pre", { id: "goal", text: pretty(view.outcome.goal) }));
    box.hidden = false;
  }

  // ---- the episode page --------------------------------------------------------------------

  function playPage() {
    let view = null;
    let pending = [];
    let form = null;
    let untouched = "";  // the tool form's values as generated

    function renderPending() {
      $("pending").replaceChildren(...pending.map((call, i) => el("li", {}, el("code", { text: callText(call) }), " ",
        el("button", { type: "button", class: "link", onclick: () => { pending.splice(i, 1); renderPending(); }, text: "remove" }))));
    }

    function chooseTool() {
      const schema = view.tools.find((t) => t.function.name === $("tool").value).function;
      $("tool-description").textContent = schema.description || "";
      const params = schema.parameters || { properties: {} };
      form = Object.entries(params.properties || {}).map(([key, sub]) => field(key, key, sub, (params.required || []).includes(key)));
      $("tool-form").replaceChildren(...form.map((f) => f.node));
      untouched = formValues();
    }

    function render(next) {
      const fresh = !view || view.episode !== next.episode;
      view = next;
      $("game").hidden = false;
      $("game").dataset.episode = view.episode;
      $("episode-meta").textContent = view.env_id + " · d=" + view.difficulty + " · seed " + view.seed;
      $("chat").replaceChildren(...view.messages.map(renderMessage));
      $("chat").scrollTop = $("chat").scrollHeight;
      $("status").replaceChildren(el("span", { text: "turn " + view.turn }), el("span", { text: "user-caused " + view.user_caused_turns }),
        el("span", { text: "turns left " + view.turns_left }), el("span", { text: "cart: " + (view.cart.lines || []).length + " lines, $" + fmt(view.cart.total || 0) }));
      $("axes").replaceChildren(...Object.entries(view.axes).map(([k, v]) => el("tr", {}, el("th", { text: k }), el("td", { text: fmt(v) }))));
      if (fresh) {
        $("tool").replaceChildren(...view.tools.map((t) => el("option", { text: t.function.name })));
        chooseTool();
        pending = [];
        renderPending();
        $("message").value = "";
        $("raw").value = "";
      }
      $("hint").hidden = true;
      $("composer").hidden = view.done;
      $("over").hidden = !view.done;
      renderOutcome(view);
      if (!fresh) showLatest();
    }

    function showLatest() {
      // after a turn, what it caused (the outcome, else the newest message) in view: on a phone it is above the composer
      const latest = view.done ? $("outcome") : $("chat").lastElementChild;
      if (!latest) return;
      const box = latest.getBoundingClientRect();
      if (box.top < 0 || box.bottom > window.innerHeight) latest.scrollIntoView({ block: view.done ? "start" : "end" });
    }

    const formValues = () => JSON.stringify(form.map((f) => f.read()));
    const formFilled = () => formValues() !== untouched;  // someone typed into the tool form

    async function run(action) {
      showError("");
      try { await action(); } catch (error) { showError(error.message); }
    }

    $("reset-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const seed = $("seed").value;
      const body = { env_id: $("env").value, difficulty: Number($("difficulty").value), seed: seed === "" ? null : Number(seed) };
      if ($("catalog")) body.catalog = $("catalog").value;
      run(async () => { view = null; render(await api("POST", "/api/episodes", body)); });
    });
    $("tool").addEventListener("change", chooseTool);
    $("add-call").addEventListener("click", () => {
      const args = {};
      for (const f of form) { const v = f.read(); if (v !== undefined) args[f.name] = v; }
      pending.push({ name: $("tool").value, arguments: args });
      renderPending();
      chooseTool();
    });
    const step = (action) => run(async () => render(await api("POST", "/api/episodes/" + view.episode + "/step", { action })));
    $("send").addEventListener("click", () => {
      if (!pending.length && !$("message").value.trim()) {  // nothing to send: a turn would be spent on nothing
        showError(formFilled() ? "The " + $("tool").value + " form is filled in but not added: press \u201cAdd call to turn\u201d first."
          : "An empty turn is not sent: write a message to the shopper or add a tool call.");
        return;
      }
      const action = { tool_calls: pending };
      if ($("message").value.trim()) action.message = $("message").value;
      pending = [];
      renderPending();
      $("message").value = "";
      step(action);
    });
    $("send-raw").addEventListener("click", () => {
      const raw = $("raw").value;
      if (!raw.trim()) { showError("The raw box is empty: paste a turn first."); return; }
      $("raw").value = "";
      step(raw);
    });
    $("show-me")?.addEventListener("click", () => run(async () => {
      const { action } = await api("POST", "/api/episodes/" + view.episode + "/hint");
      const use = () => { $("raw").value = pretty(action); $("raw-box").open = true; };
      $("hint").replaceChildren(el("div", {}, el("strong", { text: "The oracle would do:" }),
        action.content ? el("div", { class: "text", text: "say: " + action.content }) : null,
        el("ul", {}, (action.tool_calls || []).map((c) => el("li", {}, el("code", { text: callText(c) })))),
        el("button", { type: "button", onclick: use, text: "Put it in the raw box" })));
      $("hint").hidden = false;
    }));
  }

  function uploadPage() {
    $("runs-file").addEventListener("change", async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      showError("");
      try {
        const opened = await api("POST", "/api/runs", await file.text(), { "content-type": "application/x-ndjson", "x-filename": file.name });
        window.location.href = opened.url;
      } catch (error) { showError(error.message); }
    });
  }

  if ($("reset-form")) playPage();
  if ($("runs-file")) uploadPage();
})();
