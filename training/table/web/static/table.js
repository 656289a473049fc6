// The Piquet table in the browser. Plain JavaScript, no build step.
//
// The server sends views (what this seat may know) and narration; this script draws them and
// sends the person's choices. It decides nothing about the rules: a refused move comes back as an
// error whose reason is shown. Play and Watch each have their own WebSocket and table; the table
// id and token are kept in sessionStorage, so a reload joins the same table again.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_WORDS = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_WORDS = {
  7: "seven", 8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king", A: "ace",
};

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-") || k.startsWith("aria-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
};

const app = {
  tab: "play",
  config: null,
  channels: {},
  replay: null, // {data, index}
  selected: new Set(), // cards chosen for the exchange
};

// ------------------------------------------------------------------ cards

function cardLabel(code) {
  if (code === "JK") return "joker";
  return `${RANK_WORDS[code[0]]} of ${SUIT_WORDS[code[1]]}`;
}

function cardFace(code, { button = false, mini = false } = {}) {
  const node = el(button ? "button" : "span", { class: "card" });
  if (button) {
    node.type = "button";
    node.dataset.card = code;
  } else {
    node.setAttribute("role", "img");
  }
  node.setAttribute("aria-label", cardLabel(code));
  if (mini) node.classList.add("mini");
  if (code === "JK") {
    node.classList.add("joker");
    node.append(el("span", { class: "corner", text: "JK" }), el("span", { class: "pip", text: "★" }));
    return node;
  }
  const rank = code[0] === "T" ? "10" : code[0];
  const suit = SUITS[code[1]];
  if (code[1] === "H" || code[1] === "D") node.classList.add("red");
  node.append(el("span", { class: "corner" }, rank, el("small", { text: suit })), el("span", { class: "pip", text: suit }));
  return node;
}

function backs(n) {
  const row = el("span", { class: "backs", "aria-label": `${n} card${n === 1 ? "" : "s"} face down` });
  for (let i = 0; i < n; i++) row.append(el("span", { class: "back" }));
  return row;
}

// Text with the red suits coloured, built from text nodes only (names come from elsewhere).
function suitText(text) {
  const frag = document.createDocumentFragment();
  for (const part of text.split(/([♥♦])/)) {
    if (part === "♥" || part === "♦") frag.append(el("span", { class: "red-suit", text: part }));
    else if (part) frag.append(document.createTextNode(part));
  }
  return frag;
}

// ------------------------------------------------------------------ channels (one per table)

class Channel {
  constructor(kind) {
    this.kind = kind; // "play" or "watch"
    this.ws = null;
    this.view = null;
    this.version = -1;
    this.log = [];
    this.queue = [];
    this.key = `piquet.${kind}`;
  }

  open() {
    if (this.ws && this.ws.readyState <= 1) return;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    this.ws = new WebSocket(`${proto}://${location.host}/ws`);
    this.ws.onopen = () => {
      const saved = sessionStorage.getItem(this.key);
      if (saved) {
        const { table, token } = JSON.parse(saved);
        this.ws.send(JSON.stringify({ type: "join", table, token }));
      }
      for (const msg of this.queue.splice(0)) this.ws.send(JSON.stringify(msg));
    };
    this.ws.onmessage = (ev) => this.receive(JSON.parse(ev.data));
    this.ws.onclose = () => {
      this.ws = null;
      if (sessionStorage.getItem(this.key)) setTimeout(() => this.open(), 1500);
    };
  }

  send(msg) {
    if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify(msg));
    else {
      this.queue.push(msg);
      this.open();
    }
  }

  move(msg) {
    this.send({ ...msg, version: this.version });
  }

  // Take the table back from the window that joined it (the server re-attaches this socket).
  rejoin() {
    const saved = sessionStorage.getItem(this.key);
    if (saved) this.send({ type: "join", ...JSON.parse(saved) });
  }

  receive(msg) {
    if (msg.type === "welcome") {
      this.displaced = false;
      sessionStorage.setItem(this.key, JSON.stringify({ table: msg.table, token: msg.token }));
      this.version = msg.version;
      this.view = msg.view;
      this.log = msg.log.slice();
      app.selected.clear();
      showMessage("");
      if (app.tab === this.kind) render();
    } else if (msg.type === "update") {
      if (msg.version < this.version) return;
      if (msg.version > this.version) showMessage("");
      this.version = msg.version;
      this.view = msg.view;
      this.log.push(...msg.log);
      if (msg.log.length) app.selected.clear();
      if (app.tab === this.kind) render();
    } else if (msg.type === "error") {
      if (msg.code === "no_table") sessionStorage.removeItem(this.key);
      this.displaced = msg.code === "displaced";
      if (app.tab === this.kind) showMessage(msg.message, this.displaced);
    } else if (msg.type === "left") {
      sessionStorage.removeItem(this.key);
    }
  }
}

function channel(kind) {
  if (!app.channels[kind]) app.channels[kind] = new Channel(kind);
  return app.channels[kind];
}

// The refusal's reason; ``rejoin`` offers to take a table back from another window.
function showMessage(text, rejoin = false) {
  $("#message-text").textContent = text;
  $("#message").classList.toggle("shown", Boolean(text));
  $('button[data-action="rejoin"]').hidden = !rejoin;
}

// ------------------------------------------------------------------ drawing the table

function current() {
  if (app.tab === "replay") {
    const r = app.replay;
    if (!r) return null;
    const frame = r.data.frames[r.index];
    const log = [];
    for (let i = 0; i <= r.index; i++) log.push(...r.data.frames[i].lines);
    return { view: frame.view, log, stepLines: frame.lines.length, kind: "replay" };
  }
  const ch = app.channels[app.tab];
  if (!ch || !ch.view) return null;
  return { view: ch.view, log: ch.log, stepLines: 0, kind: app.tab };
}

function render() {
  const cur = current();
  const ch = app.channels[app.tab];
  document.body.dataset.version = ch && ch.view ? String(ch.version) : "-1";
  renderLog(cur ? cur.log : [], cur ? cur.stepLines : 0);
  if (!cur) {
    $("#phase").textContent = "–";
    $("#deal").textContent = "–";
    $("#totals").textContent = "–";
    $("#role").textContent = "no game yet";
    for (const id of ["#seat-top", "#seat-bottom", "#talon", "#trick", "#declared", "#sheet"]) $(id).replaceChildren();
    $("#breakdown").hidden = true;
    setPrompt(app.tab === "replay" ? "Open a record to replay it." : app.tab === "watch" ? "Choose two agents, then Watch." : "Choose an opponent, then New partie.");
    setButtons(null, null);
    return;
  }
  const v = cur.view;
  const playing = cur.kind === "play";
  const me = v.seat == null ? 0 : v.seat;
  const them = 1 - me;
  const who = (p) => (playing && p === v.seat ? "you" : v.names[p]);
  $("#phase").textContent = v.deal_over ? "deal over" : v.phase;
  $("#deal").textContent = `${v.deal} of ${v.deals}`;
  $("#totals").textContent = `${who(me)} ${v.totals[me]} · ${who(them)} ${v.totals[them]}`;
  $("#role").textContent = playing
    ? `you are ${v.elder === me ? "elder" : "younger"} hand`
    : `${v.names[v.elder]} is elder`;
  renderSeat($("#seat-bottom"), v, me, who, playing);
  renderSeat($("#seat-top"), v, them, who, playing);
  renderTalon(v, playing);
  renderTrick(v, who);
  renderDeclared(v, who);
  renderSheet(v, who);
  renderBreakdown(v, who, playing);
  renderActions(v, playing);
  if (playing) focusChoice(v);
}

// Keyboard players land on what they may do next, unless they are somewhere already.
function focusChoice(v) {
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active) && !active.disabled) return;
  const kind = v.choice ? v.choice.kind : null;
  let target = null;
  if (kind === "play" || kind === "exchange") target = $("#seat-bottom button[data-card]:not(:disabled)");
  else if (kind === "declare") target = $('button[data-action="declare"]');
  else if (kind === "next") target = $('button[data-action="next"]');
  if (target) target.focus({ preventScroll: true });
}

function renderSeat(node, v, p, who, playing) {
  const info = v.players[p];
  const head = el("div", { class: "who" },
    el("span", { class: "name", text: playing && p === v.seat ? `You (${v.names[p]})` : v.names[p] }),
    el("span", { class: `badge${v.elder === p ? " elder" : ""}`, text: v.elder === p ? "elder" : "younger" }),
    el("span", { class: "badge", text: `${v.tricks[p]} trick${v.tricks[p] === 1 ? "" : "s"}` }),
    el("span", { class: "badge", text: `${v.deal_points[p]} this deal` }));
  if (v.to_act === p && !v.deal_over) head.append(el("span", { class: "badge turn", text: "to play" }));
  if (v.thinking && v.to_act === p) head.append(el("span", { class: "thinking", text: `${v.thinking} is thinking` }));
  const parts = [head];
  if (info.hand) {
    parts.push(handRow(info.hand, v, playing && p === v.seat));
  } else {
    const row = el("div", { class: "hand" }, backs(info.cards));
    if (info.known.length) {
      const shown = el("span", { class: "small-row" }, el("span", { class: "row-label", text: "known in hand:" }));
      for (const c of info.known) shown.append(cardFace(c, { mini: true }));
      row.append(shown);
    }
    parts.push(row);
  }
  if (info.discards && info.discards.length) {
    const row = el("div", { class: "small-row" }, el("span", { class: "row-label", text: playing && p === v.seat ? "your discards:" : "discards:" }));
    for (const c of info.discards) row.append(cardFace(c, { mini: true }));
    parts.push(row);
  } else if (!info.discards && v.exchanged[p] && v.taken[p]) {
    parts.push(el("div", { class: "small-row" }, el("span", { class: "row-label", text: `exchanged ${v.taken[p]} card${v.taken[p] === 1 ? "" : "s"}` })));
  }
  node.replaceChildren(...parts);
  node.setAttribute("aria-label", playing && p === v.seat ? "Your hand" : `${v.names[p]}'s side`);
}

function handRow(groups, v, mine) {
  const choice = mine ? v.choice : null;
  const legal = new Set(choice && (choice.kind === "play" || choice.kind === "exchange") ? choice.cards : []);
  const combo = new Set(choice && choice.kind === "declare" ? choice.cards : []);
  const row = el("div", { class: "hand", role: "group", "aria-label": "hand" });
  for (const group of groups) {
    const g = el("span", { class: "suit-group" });
    for (const code of group) {
      const card = cardFace(code, { button: mine });
      if (mine) {
        card.disabled = !legal.has(code);
        if (choice && choice.kind === "exchange") {
          const chosen = app.selected.has(code);
          card.classList.toggle("selected", chosen);
          card.setAttribute("aria-pressed", chosen ? "true" : "false");
          if (!chosen && app.selected.size >= choice.max) card.disabled = true;
        }
        if (combo.has(code)) card.classList.add("combo");
      }
      g.append(card);
    }
    row.append(g);
  }
  if (!groups.length) row.append(el("span", { class: "row-label", text: "no cards" }));
  return row;
}

function renderTalon(v, playing) {
  const parts = [el("h3", { text: "Talon" })];
  if (v.talon) {
    const row = el("div", { class: "small-row" });
    v.talon.forEach((c) => row.append(cardFace(c, { mini: true })));
    if (!v.talon.length) row.append(el("span", { class: "row-label", text: "empty" }));
    parts.push(row, el("div", { class: "row-label", text: v.talon.length ? "top first" : "" }));
  } else {
    parts.push(el("div", { class: "small-row" }, v.talon_count ? backs(Math.min(v.talon_count, 8)) : el("span", { class: "row-label", text: "empty" }),
      el("span", { class: "row-label", text: `${v.talon_count} card${v.talon_count === 1 ? "" : "s"}` })));
    if (v.talon_seen.length) {
      const row = el("div", { class: "small-row" }, el("span", { class: "row-label", text: "you saw:" }));
      v.talon_seen.forEach((c) => row.append(cardFace(c, { mini: true })));
      parts.push(row);
    }
  }
  $("#talon").replaceChildren(...parts);
}

function renderTrick(v, who) {
  const t = v.trick;
  const n = v.tricks[0] + v.tricks[1] + (v.deal_over ? 0 : 1);
  const parts = [el("h3", { text: v.phase === "play" || v.deal_over ? `Trick ${Math.min(n, 12)}` : "Trick" })];
  const slots = el("div", { class: "slots" });
  for (let i = 0; i < 2; i++) {
    const p = i === 0 ? t.leader : 1 - t.leader;
    const code = t.cards[i];
    slots.append(el("div", { class: "slot" }, code ? cardFace(code) : el("span", { class: "empty" }), el("span", { text: who(p) })));
  }
  parts.push(slots);
  if (t.winner != null) parts.push(el("div", { class: "won", text: `${who(t.winner)} win${who(t.winner) === "you" ? "" : "s"} the trick` }));
  else if (v.last_trick && v.phase === "play") {
    const l = v.last_trick;
    parts.push(el("div", { class: "last" }, suitText(`last trick: ${who(l.leader)} ${pretty(l.cards[0])}, ${who(1 - l.leader)} ${pretty(l.cards[1])} → ${who(l.winner)}`)));
  }
  $("#trick").replaceChildren(...parts);
}

function pretty(code) {
  if (code === "JK") return "JK";
  return (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
}

function renderDeclared(v, who) {
  const parts = [el("h3", { text: "Declarations" })];
  if (!v.declarations.length) {
    parts.push(el("div", { class: "row-label", text: v.phase === "exchange" ? "after the exchange" : "" }));
  } else {
    const table = el("table");
    table.append(el("tr", {}, el("th", { text: "" }), el("th", { text: who(v.elder) }), el("th", { text: who(1 - v.elder) })));
    for (const cat of v.declarations) {
      const row = el("tr", {}, el("th", { text: cat.category }));
      for (const p of [v.elder, 1 - v.elder]) {
        const d = cat.players[p];
        const cell = el("td");
        if (d.declared) cell.append(suitText(d.declared));
        else cell.append(d.decided ? "pass" : "…");
        if (d.scored) cell.append(" ", el("span", { class: "pts", text: `+${d.scored}` }));
        row.append(cell);
      }
      table.append(row);
    }
    parts.push(table);
  }
  $("#declared").replaceChildren(...parts);
}

function scoreHead(v, who, first) {
  return el("tr", {}, el("th", { text: first }), el("th", { text: who(0) }), el("th", { text: who(1) }));
}

function renderSheet(v, who) {
  const table = $("#sheet");
  table.replaceChildren();
  if (!v.sheet.length) return;
  const head = el("tr", {}, el("th", { text: "deal" }), el("th", { text: "elder" }), el("th", { text: who(0) }), el("th", { text: who(1) }), el("th", { text: "totals" }));
  table.append(head);
  for (const r of v.sheet) {
    table.append(el("tr", {}, el("td", { text: String(r.deal) }), el("td", { text: who(r.elder) }), el("td", { text: String(r.scores[0]) }), el("td", { text: String(r.scores[1]) }), el("td", { text: `${r.totals[0]} – ${r.totals[1]}` })));
  }
}

function renderBreakdown(v, who, playing) {
  const panel = $("#breakdown");
  const show = v.deal_over || v.phase === "over";
  panel.hidden = !show;
  if (!show) return;
  const last = v.sheet.length ? v.sheet[v.sheet.length - 1].deal : v.deal;
  $("#breakdown-title").textContent = v.phase === "over" ? (v.mode === "partie" ? "The partie is over" : "The deal is over") : `Deal ${last} is over`;
  const table = $("#breakdown-table");
  table.replaceChildren(scoreHead(v, who, `Deal ${last}`));
  for (const row of v.breakdown || []) {
    table.append(el("tr", { class: row.label === "deal total" ? "total" : "" }, el("td", { text: row.label }), el("td", { text: String(row.points[0]) }), el("td", { text: String(row.points[1]) })));
  }
  table.append(el("tr", {}, el("td", { text: "partie totals" }), el("td", { text: String(v.totals[0]) }), el("td", { text: String(v.totals[1]) })));
  const settle = $("#settlement");
  settle.replaceChildren(...(v.settlement || []).map((line) => el("p", {}, suitText(line))));
  if (v.saved) settle.append(el("p", { class: "saved", text: `Game record saved as ${v.saved}.` }));
  else if (v.unsaved) settle.append(el("p", { class: "saved", text: `This game was not saved: ${v.unsaved}.` }));
  panel.querySelector('[data-action="next"]').hidden = !(playing && v.choice && v.choice.kind === "next");
}

function setPrompt(text) {
  $("#prompt").textContent = text;
}

function setButtons(v, choice) {
  const declare = $('[data-action="declare"]');
  const pass = $('[data-action="pass"]');
  const done = $('[data-action="done"]');
  declare.hidden = pass.hidden = !(choice && choice.kind === "declare");
  done.hidden = !(choice && choice.kind === "exchange");
  if (choice && choice.kind === "declare") declare.disabled = !choice.can_declare;
  if (choice && choice.kind === "exchange") {
    const n = app.selected.size;
    done.disabled = n < choice.min || n > choice.max;
    const span = choice.min === choice.max ? `${choice.min}` : `${choice.min} to ${choice.max}`;
    if (n) done.textContent = `Done: discard ${n}, take ${n}`;
    else done.textContent = choice.min > 0 ? `Choose ${span} to discard` : "Done: keep my hand";
  }
  $("#command").hidden = app.tab !== "play" || !choice || choice.kind === "next";
}

function renderActions(v, playing) {
  const choice = playing ? v.choice : null;
  setButtons(v, choice);
  if (!playing) {
    if (app.tab === "watch") setPrompt(v.phase === "over" ? "The game is over." : v.paused ? "Paused: Resume or Step." : "Watching…");
    else setPrompt(replayPrompt());
    return;
  }
  if (v.phase === "over") setPrompt("The game is over: New partie for another.");
  else if (!choice) setPrompt(v.thinking ? `${v.thinking} is thinking…` : "Waiting for the opponent…");
  else if (choice.kind === "exchange") {
    const span = choice.min === choice.max ? `${choice.min}` : `${choice.min} to ${choice.max}`;
    setPrompt(`Exchange: choose ${span} card${choice.max === 1 ? "" : "s"} to discard, then Done (${v.talon_count} in the talon).`);
  } else if (choice.kind === "declare") {
    const cap = choice.category[0].toUpperCase() + choice.category.slice(1);
    setPrompt(`${cap}: declare ${choice.combo}, or pass?`);
  } else if (choice.kind === "play") setPrompt(`${choice.prompt}.`);
  else if (choice.kind === "next") setPrompt("The deal is over: Next deal when you are ready.");
}

function replayPrompt() {
  const r = app.replay;
  if (!r) return "";
  const f = r.data.frames[r.index];
  const words = { opening: "the opening", start: "the deal's start", trick: "a trick", end: "the deal's end", unfinished: "where the record ends" };
  return `${r.data.title}: ${words[f.kind] || f.kind}, deal ${f.deal}.`;
}

function renderLog(lines, stepLines) {
  const log = $("#log");
  const items = [];
  let heading = false;
  lines.forEach((line, i) => {
    if (line === "") {
      heading = true;
      return;
    }
    const li = el("li", {}, suitText(line));
    if (heading) li.classList.add("heading");
    if (stepLines && i >= lines.length - stepLines) li.classList.add("step");
    heading = false;
    items.push(li);
  });
  log.replaceChildren(...items);
  log.scrollTop = log.scrollHeight;
}

// ------------------------------------------------------------------ acting

function play(code) {
  const v = channel("play").view;
  if (!v || !v.choice) return;
  if (v.choice.kind === "exchange") {
    if (app.selected.has(code)) app.selected.delete(code);
    else if (app.selected.size < v.choice.max) app.selected.add(code);
    render();
    const again = document.querySelector(`button[data-card="${code}"]`);
    if (again) again.focus();
  } else if (v.choice.kind === "play") {
    channel("play").move({ type: "play", card: code });
  }
}

function typed(text) {
  const v = channel("play").view;
  const words = text.trim();
  if (!words || !v || !v.choice) return;
  const kind = v.choice.kind;
  if (kind === "declare") {
    if (/^(d|declare|y|yes|1)$/i.test(words)) channel("play").move({ type: "declare" });
    else if (/^(p|pass|n|no|2)$/i.test(words)) channel("play").move({ type: "pass" });
    else showMessage("answer d (declare) or p (pass)");
  } else if (kind === "exchange") {
    const cards = words.replace(/^(discard|x)\s+/i, "").split(/[\s,]+/).filter(Boolean);
    const keep = cards.length === 1 && /^(none|done|keep|-)$/i.test(cards[0]);
    channel("play").move({ type: "exchange", cards: keep ? [] : cards.slice(0, 12) });
  } else if (kind === "play") {
    channel("play").move({ type: "play", card: words.slice(0, 16) });
  }
}

function action(name) {
  const ch = channel(app.tab === "watch" ? "watch" : "play");
  switch (name) {
    case "new": {
      const v = channel("play").view;
      if (v && v.phase !== "over" && !confirm("Leave the partie under way? It is saved as unfinished.")) return;
      channel("play").send({ type: "new", opponent: $("#opponent").value, mode: $("#mode").value });
      break;
    }
    case "done":
      channel("play").move({ type: "exchange", cards: [...app.selected] });
      break;
    case "declare":
    case "pass":
    case "next":
      channel("play").move({ type: name });
      break;
    case "watch":
      channel("watch").send({ type: "watch", players: [$("#watch-a").value, $("#watch-b").value], mode: $("#watch-mode").value, delay: Number($("#speed").value) });
      break;
    case "rejoin":
      ch.rejoin();
      break;
    case "pause":
    case "resume":
    case "step":
      ch.send({ type: name });
      break;
    case "open":
      openRecord($("#record-list").value);
      break;
    case "back":
      stepReplay(-1);
      break;
    case "forward":
      stepReplay(1);
      break;
    case "prev-deal":
      jumpDeal(-1);
      break;
    case "next-deal":
      jumpDeal(1);
      break;
    default:
      break;
  }
}

// ------------------------------------------------------------------ replay

async function listRecords() {
  const res = await fetch("/api/records");
  const list = await res.json();
  const sel = $("#record-list");
  sel.replaceChildren(...list.map((r) => el("option", { value: r.name, text: r.name })));
  if (!list.length) sel.append(el("option", { value: "", text: "no records yet" }));
}

async function showFrames(res, title = null) {
  const data = await res.json();
  if (!res.ok) {
    app.replay = null; // the record before it is no longer what is asked for
    render();
    updateFramePos();
    showMessage(data.error || `the record could not be read (${res.status})`);
    return;
  }
  if (title) data.title = title;
  showMessage("");
  app.replay = { data, index: 0 };
  render();
  updateFramePos();
}

async function openRecord(name) {
  if (!name) return;
  await showFrames(await fetch(`/api/records/${encodeURIComponent(name)}`));
}

async function uploadRecord(file) {
  const text = await file.text();
  const name = file.name.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "").slice(0, 80);
  await showFrames(await fetch("/api/replay", { method: "POST", body: text, headers: { "Content-Type": "application/json" } }), `${name} (uploaded)`);
}

function stepReplay(delta) {
  const r = app.replay;
  if (!r) return;
  r.index = Math.max(0, Math.min(r.data.frames.length - 1, r.index + delta));
  render();
  updateFramePos();
}

function jumpDeal(delta) {
  const r = app.replay;
  if (!r) return;
  const starts = [0, ...r.data.starts.filter((s) => s > 0)]; // the opening, then each deal
  let k = starts.filter((s) => s <= r.index).length - 1;
  if (delta < 0 && starts[k] === r.index) k -= 1;
  else if (delta > 0) k += 1;
  k = Math.max(0, Math.min(starts.length - 1, k));
  r.index = starts[k];
  render();
  updateFramePos();
}

function updateFramePos() {
  const r = app.replay;
  $("#frame-pos").textContent = r ? `step ${r.index + 1} of ${r.data.frames.length} · deal ${r.data.frames[r.index].deal}` : "";
}

// ------------------------------------------------------------------ results

async function showResults() {
  const res = await fetch("/api/results");
  const data = await res.json();
  const box = $("#results");
  const fmt = (e, pct) => {
    if (!e) return "–";
    const f = (x) => (x == null ? "∞" : pct ? `${(100 * x).toFixed(1)}%` : `${x >= 0 ? "+" : ""}${x.toFixed(pct ? 1 : 2)}`);
    if (e.ci_low == null && e.ci_high == null) return `${f(e.mean)} (one game: no interval)`;
    return `${f(e.mean)} [${e.ci_low == null ? "−∞" : f(e.ci_low)}, ${f(e.ci_high)}]`;
  };
  if (!data.standings.length) {
    box.replaceChildren(el("p", { text: `No game of a person yet (${data.records} records).` }));
    return;
  }
  const table = el("table");
  table.append(el("tr", {}, ...["opponent", "rules", "mode", "games", "unfinished", "points per deal", "win rate", "partie score", "verdict"].map((t) => el("th", { text: t }))));
  for (const s of data.standings) {
    const verdict = s.games === 0 ? "–" : s.too_small ? "too few games" : s.beats === "yes" ? "people win" : s.beats === "no (worse)" ? "the agent wins" : "not demonstrated";
    table.append(el("tr", {}, ...[s.opponent, s.rules, s.mode, String(s.games), String(s.unfinished), fmt(s.points_per_deal), fmt(s.win_rate, true), fmt(s.partie_score), verdict].map((t) => el("td", { text: t }))));
  }
  const cut = data.left_out ? ` ${data.left_out} older records were not read: these results leave them out.` : "";
  const records = `${data.records} record${data.records === 1 ? "" : "s"}`;
  box.replaceChildren(table, el("p", { class: "note", text: `${records}; ${data.without_human} without a person; ${data.unreadable.length} unreadable.${cut}` }));
}

// ------------------------------------------------------------------ tabs, events, start

function showTab(tab) {
  app.tab = tab;
  for (const b of document.querySelectorAll("[data-tab]")) b.setAttribute("aria-selected", b.dataset.tab === tab ? "true" : "false");
  $("#controls-play").hidden = tab !== "play";
  $("#controls-watch").hidden = tab !== "watch";
  $("#controls-replay").hidden = tab !== "replay";
  $("#layout").hidden = tab === "results";
  $("#results-view").hidden = tab !== "results";
  showMessage("");
  if (tab === "results") showResults();
  if (tab === "replay") listRecords();
  $("#actions").classList.toggle("passive", tab !== "play");
  $(".keys").hidden = tab !== "play";
  render();
}

function fillChoices(config) {
  $("#rules").textContent = `${config.rules} rules`;
  for (const id of ["#opponent", "#watch-a", "#watch-b"]) {
    const sel = $(id);
    sel.replaceChildren(...config.opponents.map((o) => el("option", { value: o.id, text: `${o.label}${o.searches ? " (thinks)" : ""}` })));
    sel.value = config.default;
  }
  $("#mode").options[0].textContent = `A partie (${config.deals} deals)`;
  $("#watch-mode").options[0].textContent = `A partie (${config.deals} deals)`;
  $("#speed").value = String(config.watch_delay);
  $("#speed-out").textContent = `${config.watch_delay} s`;
}

function onKey(ev) {
  const target = ev.target;
  if (target.closest && target.closest("input, select, textarea")) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (app.tab === "replay") {
    const keys = { ArrowRight: () => stepReplay(1), ArrowLeft: () => stepReplay(-1), PageDown: () => jumpDeal(1), PageUp: () => jumpDeal(-1) };
    if (keys[ev.key]) {
      ev.preventDefault();
      keys[ev.key]();
    }
    return;
  }
  if (app.tab === "watch") {
    if (ev.key === " ") {
      const v = channel("watch").view;
      if (v) {
        ev.preventDefault();
        channel("watch").send({ type: v.paused ? "resume" : "pause" });
      }
    }
    return;
  }
  if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
    const cards = [...document.querySelectorAll("#seat-bottom button[data-card]:not(:disabled)")];
    if (!cards.length) return;
    ev.preventDefault();
    const i = cards.indexOf(document.activeElement);
    const next = i < 0 ? 0 : (i + (ev.key === "ArrowRight" ? 1 : cards.length - 1)) % cards.length;
    cards[next].focus();
    return;
  }
  const shortcut = { d: "declare", p: "pass", n: "next" }[ev.key.toLowerCase()];
  if (shortcut) {
    const button = $(`button[data-action="${shortcut}"]`);
    if (button && !button.hidden && !button.disabled && button.offsetParent !== null) {
      ev.preventDefault();
      button.click();
    }
  } else if (ev.key === "/") {
    ev.preventDefault();
    $("#command-text").focus();
  }
}

// A table served with --token: ask for it once (the server answers with a cookie).
function askToken() {
  const box = $("#login");
  const tabs = ["#layout", ".tabs", "#controls-play"];
  box.hidden = false;
  for (const sel of tabs) $(sel).hidden = true;
  $("#login-token").focus();
  return new Promise((resolve) => {
    $("#login-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const res = await fetch("/api/login", { method: "POST", body: JSON.stringify({ token: $("#login-token").value }), headers: { "Content-Type": "application/json" } });
      if (res.ok) {
        box.hidden = true;
        for (const sel of tabs) $(sel).hidden = false;
        resolve();
      } else {
        const data = await res.json().catch(() => ({}));
        $("#login-message").textContent = data.error || `refused (${res.status})`;
      }
    });
  });
}

async function start() {
  document.addEventListener("click", (ev) => {
    const card = ev.target.closest("button[data-card]");
    if (card && !card.disabled) {
      play(card.dataset.card);
      return;
    }
    const act = ev.target.closest("button[data-action]");
    if (act && !act.disabled) action(act.dataset.action);
    const tab = ev.target.closest("button[data-tab]");
    if (tab) showTab(tab.dataset.tab);
  });
  document.addEventListener("keydown", onKey);
  $("#command").addEventListener("submit", (ev) => {
    ev.preventDefault();
    typed($("#command-text").value);
    $("#command-text").value = "";
  });
  $("#upload").addEventListener("change", (ev) => {
    if (ev.target.files.length) uploadRecord(ev.target.files[0]);
  });
  $("#speed").addEventListener("input", (ev) => {
    $("#speed-out").textContent = `${Number(ev.target.value).toFixed(1)} s`;
  });
  $("#speed").addEventListener("change", (ev) => {
    const ch = app.channels.watch;
    if (ch && ch.view) ch.send({ type: "speed", delay: Number(ev.target.value) });
  });
  let res = await fetch("/api/config");
  if (res.status === 401) {
    await askToken();
    res = await fetch("/api/config");
  }
  app.config = await res.json();
  fillChoices(app.config);
  for (const kind of ["play", "watch"]) if (sessionStorage.getItem(`piquet.${kind}`)) channel(kind).open();
  showTab(sessionStorage.getItem("piquet.watch") && !sessionStorage.getItem("piquet.play") ? "watch" : "play");
  document.body.dataset.ready = "true";
}

window.piquet = app; // for the curious (and the tests' error checks)
start();
