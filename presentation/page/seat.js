/* feastlog seat page: the seat's moves, chosen in the page and sent to the server.
 *
 * The server sends what this seat may do now (GET …/seat/legal): each legal command with
 * the steps a player takes to choose it.  The panel asks one question at a time, offering
 * only answers that still lead to a legal command; a question with one possible answer
 * answers itself.  A move is sent with the seq its list was made at, so a page that is
 * behind is refused by the server; the page also holds a move back itself while it knows
 * it is behind (the live stream brought a newer row) or while the connection is down.
 * Runs after page.js, which tells it of new rows ("feastlog:step") and of the stream's
 * state ("feastlog:live").  Nothing here decides what is legal: the server does.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("feastlog-data").textContent);
  const csrf = document.querySelector('meta[name="feastlog-csrf"]').content;
  const base = data.live.seat; // /games/ID/seat
  const isSeat = data.viewer.id.startsWith("seat:");
  let legal = null; // the server's answer: {seq, options, to_act, over, partial}
  let chosen = []; // the answers given so far, as "ask\u0000pick" keys
  let latestSeq = 0; // the newest row the live stream brought
  let connection = "live";
  let sending = false;
  let asking = null; // a legal list being fetched
  let lastSent = null; // what this page sent last: {seq, sealed, summary}
  const replies = []; // every answer the server gave a move from this page

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "cls") el.className = v;
      else if (k === "text") el.textContent = v;
      else el.setAttribute(k, v);
    }
    for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid);
    return el;
  }

  /* ---- the panel ---- */

  const panel = h("section", { id: "seat-moves", cls: "seat-moves", "aria-labelledby": "seat-moves-title" });
  const title = h("h2", { id: "seat-moves-title", text: "Your move" });
  const status = h("p", { id: "seat-status", cls: "seat-status", role: "status", "aria-live": "polite" });
  const connectionLine = h("p", { id: "seat-connection", cls: "seat-connection", role: "status", "aria-live": "assertive", hidden: "" });
  const picked = h("ol", { id: "seat-picked", cls: "seat-picked", "aria-label": "Your choices so far" });
  const question = h("div", { id: "seat-question", cls: "seat-question" });
  const error = h("p", { id: "seat-error", cls: "seat-error", role: "alert", hidden: "" });
  const send = h("button", { type: "button", id: "seat-send", cls: "seat-send", disabled: "" }, "Send my move");
  const reset = h("button", { type: "button", id: "seat-reset", cls: "seat-reset" }, "Start again");
  const actions = h("div", { cls: "seat-actions" }, send, reset);
  // places kept for the table's clock and the arbiter call (issue 34), drawn when it lands
  const clock = h("div", { id: "seat-clock", cls: "seat-clock", hidden: "" });
  const arbiter = h("div", { id: "seat-arbiter", cls: "seat-arbiter", hidden: "" });
  panel.append(title, connectionLine, status, error, picked, question, actions, clock, arbiter);
  document.querySelector("header.top").after(panel);

  // the page's "forget my token" form carries the CSRF token too
  for (const form of document.querySelectorAll("form.leave")) {
    form.append(h("input", { type: "hidden", name: "csrf", value: csrf }));
  }

  // the organiser's page: a one-time link and its QR code for every seat, to hand out
  if (data.viewer.id === "arbiter") {
    const make = h("button", { type: "button", id: "seat-links-make", cls: "seat-links-make" }, "Make a new link for every seat");
    const list = h("ul", { id: "seat-links", cls: "seat-links", "aria-label": "Seat links" });
    const said = h("p", { id: "seat-links-status", role: "status", "aria-live": "polite" });
    make.addEventListener("click", async () => {
      make.disabled = true;
      said.textContent = "Making the links…";
      try {
        const reply = await fetch(`${base}/links`, { method: "POST", credentials: "same-origin", headers: { "X-Feastlog-Csrf": csrf } });
        const body = await reply.json();
        if (!reply.ok) { said.textContent = `Refused: ${body.error ? body.error.message : reply.status}`; return; }
        list.replaceChildren(...body.links.map((l) => h("li", {},
          h("strong", { text: `${l.name} (seat ${l.seat})` }), " ",
          h("img", { src: l.qr, alt: `QR code of ${l.name}'s link`, cls: "seat-qr" }),
          h("code", { cls: "seat-url", text: l.url }))));
        said.textContent = "Each link works once; a new one replaces a seat's unused link.";
      } catch (e) {
        said.textContent = "Could not reach the server: try again.";
      } finally {
        make.disabled = false;
      }
    });
    panel.append(h("h2", { text: "Seat links" }), said, make, list);
  }

  const key = (step) => `${step.ask}\u0000${step.pick}`;

  function candidates() {
    if (!legal) return [];
    return legal.options.filter((o) => chosen.every((k, i) => o.steps[i] && key(o.steps[i]) === k));
  }

  function complete(list) {
    return list.find((o) => o.steps.length === chosen.length) || null;
  }

  // answer every question that has one answer only
  function settle() {
    for (;;) {
      const list = candidates();
      if (!list.length || complete(list)) return;
      const next = new Map(list.map((o) => [key(o.steps[chosen.length]), o.steps[chosen.length]]));
      if (next.size !== 1) return;
      chosen.push([...next.keys()][0]);
    }
  }

  function behind() {
    return !legal || latestSeq > legal.seq || legal.stale;
  }

  function names(list) {
    if (!list.length) return "nobody";
    return list.length === 1 ? list[0] : `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
  }

  function draw() {
    picked.replaceChildren();
    question.replaceChildren();
    const down = connection !== "live" && connection !== "finished";
    connectionLine.hidden = !down;
    connectionLine.textContent = down ? "Connection lost: reconnecting… Your move waits until the page has caught up." : "";
    if (!isSeat) {
      status.textContent = "You watch as the arbiter: the seats' moves are theirs to make.";
      actions.hidden = true;
      return;
    }
    if (!legal) {
      status.textContent = "Loading your moves…";
      send.disabled = true;
      return;
    }
    if (legal.over) {
      status.textContent = "The game is over.";
      actions.hidden = true;
      return;
    }
    const list = candidates();
    const sealedNote = lastSent && lastSent.sealed && lastSent.seq === legal.seq
      ? "Your move is sealed: nobody else sees it until it is revealed. " : "";
    if (!legal.options.length) {
      const waiting = `Waiting for ${names(legal.to_act)} to act.`;
      status.textContent = (lastSent && lastSent.sealed ? "Your move is sealed: nobody else sees it until it is revealed. " : "") + waiting;
      actions.hidden = true;
      return;
    }
    actions.hidden = false;
    status.textContent = behind() ? "The table has moved on: updating your moves…"
      : `${sealedNote}It is your turn${legal.to_act.length > 1 ? ` (also to act: ${names(legal.to_act.filter((n) => n !== myName()))})` : ""}.` +
        (list.some((o) => o.sealed) ? " This move is sealed: only you see it until the reveal." : "") +
        (legal.partial ? " (The server lists the first of very many ways: more may be possible.)" : "");
    chosen.forEach((k, i) => {
      const [ask, pick] = k.split("\u0000");
      const undo = h("button", { type: "button", cls: "seat-undo", "aria-label": `Change ${ask} (now ${pick})` }, "change");
      undo.addEventListener("click", () => { chosen = chosen.slice(0, i); settle(); draw(); focusQuestion(); });
      picked.append(h("li", {}, h("span", { cls: "seat-ask", text: `${ask}: ` }), h("strong", { text: pick }), " ", undo));
    });
    const done = complete(list);
    const next = new Map();
    for (const o of list) if (o.steps.length > chosen.length) next.set(key(o.steps[chosen.length]), o.steps[chosen.length]);
    if (next.size) {
      const asks = new Set([...next.values()].map((s) => s.ask));
      const legend = asks.size === 1 ? [...asks][0] : "next";
      const group = h("fieldset", { cls: "seat-choices" }, h("legend", { text: legend }));
      for (const [k, step] of next) {
        const label = asks.size === 1 ? step.pick : `${step.ask}: ${step.pick}`;
        const b = h("button", { type: "button", cls: "seat-choice", "data-ask": step.ask, "data-pick": step.pick, "aria-label": `${step.ask}: ${step.pick}` }, label);
        b.addEventListener("click", () => { chosen.push(k); settle(); draw(); focusQuestion(); });
        group.append(b);
      }
      if (done) {
        const stop = h("button", { type: "button", cls: "seat-choice seat-enough", "aria-label": "No more: send it as it is" }, "that's all");
        stop.addEventListener("click", () => send.focus());
        group.append(stop);
      }
      question.append(group);
    }
    send.disabled = !done || behind() || down || sending;
    send.textContent = done && done.sealed ? "Send my sealed move" : "Send my move";
  }

  function myName() {
    const seat = Number(data.viewer.id.split(":")[1]);
    return data.game.seats[seat];
  }

  function focusQuestion() {
    const first = question.querySelector("button");
    (first || send).focus();
  }

  function showError(message) {
    error.hidden = !message;
    error.textContent = message || "";
  }

  async function refresh() {
    if (!isSeat) { draw(); return; }
    if (asking) return asking;
    asking = (async () => {
      try {
        const reply = await fetch(`${base}/legal`, { credentials: "same-origin", cache: "no-store" });
        const body = await reply.json();
        if (!reply.ok) { showError(body.error ? body.error.message : `the server answered ${reply.status}`); return; }
        const before = legal;
        legal = body;
        if (legal.seq > latestSeq) latestSeq = legal.seq;
        if (!before || before.seq !== legal.seq) chosen = [];
        settle();
      } catch (e) {
        showError("Could not reach the server for your moves: it will be tried again.");
      } finally {
        asking = null;
        draw();
        if (legal && (legal.stale || latestSeq > legal.seq)) setTimeout(refresh, 150);
      }
    })();
    return asking;
  }

  function newId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // send one command (the chosen one, or any a caller gives) with the seq its list holds at
  async function sendCommand(command, sealed, summary) {
    if (behind()) { showError("The table has moved on since this move was offered: choose again."); refresh(); return null; }
    sending = true;
    draw();
    try {
      const reply = await fetch(`${base}/move`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Feastlog-Csrf": csrf },
        body: JSON.stringify({ command_id: newId(), expected_seq: legal.seq, command }),
      });
      const body = await reply.json();
      replies.push(body);
      if (!reply.ok) {
        const e = body.error || {};
        const rule = e.rule_id ? ` (rule ${e.rule_id})` : "";
        const stale = e.reason === "STALE_EXPECTED_SEQ" ? " The table moved on: your moves are updated." : "";
        showError(`Refused: ${e.message || reply.status}${rule}.${stale}`);
        error.dataset.reason = e.reason || "";
        error.dataset.rule = e.rule_id || "";
        if (stale) await refresh();
        return body;
      }
      showError("");
      lastSent = { seq: body.seq, sealed: body.sealed, summary };
      if (body.seq > latestSeq) latestSeq = body.seq;
      chosen = [];
      await refresh();
      return body;
    } catch (e) {
      showError("The move could not be sent (connection lost?): nothing was recorded that the page knows of; try again.");
      return null;
    } finally {
      sending = false;
      draw();
    }
  }

  send.addEventListener("click", () => {
    const done = complete(candidates());
    if (!done) return;
    sendCommand(done.command, done.sealed, done.steps.map((s) => s.pick).join(", "));
  });
  reset.addEventListener("click", () => { chosen = []; settle(); showError(""); draw(); focusQuestion(); });

  // a new row: ask the server again, unless the table the row left says this seat is not
  // to act (then it has nothing to send, and the server is spared the question)
  document.addEventListener("feastlog:step", (e) => {
    if (e.detail.seq > latestSeq) latestSeq = e.detail.seq;
    if (!legal || latestSeq <= legal.seq) return;
    const now = window.feastlog ? window.feastlog.view(latestSeq) : null;
    const me = Number(data.viewer.id.split(":")[1]);
    if (isSeat && now && !now.over && Array.isArray(now.to_act) && !now.to_act.includes(me) && !asking) {
      legal = { seq: latestSeq, options: [], to_act: now.to_act.map((s) => data.game.seats[s]), over: false, partial: false, stale: false };
      chosen = [];
      draw();
      return;
    }
    draw();
    refresh();
  });
  document.addEventListener("feastlog:live", (e) => {
    const was = connection;
    connection = e.detail;
    draw();
    if (connection === "live" && was !== "live") refresh(); // caught up: ask again
  });

  const live = document.getElementById("live");
  if (live && live.dataset.state) connection = live.dataset.state;
  const seqs = window.feastlog ? window.feastlog.seqs() : [];
  latestSeq = seqs.length ? seqs[seqs.length - 1] : 0;
  refresh();

  // for tests and people poking at the page
  window.feastlogSeat = {
    options: () => (legal ? legal.options : []),
    seq: () => (legal ? legal.seq : null),
    ready: () => Boolean(legal) && !behind() && !sending && !asking,
    over: () => Boolean(legal && legal.over),
    replies: () => replies.slice(),
    send: (command) => sendCommand(command, false, "by hand"),
  };
})();
