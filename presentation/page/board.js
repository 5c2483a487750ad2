/* feastlog tournament board: every table on this server, refreshed from board.json. */
(function () {
  "use strict";
  const board = document.getElementById("board");
  const updated = document.getElementById("updated");
  const tournament = board.dataset.tournament || "";

  function h(tag, cls, ...kids) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    for (const kid of kids.flat()) if (kid !== null && kid !== undefined) el.append(kid instanceof Node ? kid : String(kid));
    return el;
  }

  function tableCard(g) {
    const state = g.waiting ? "waiting" : g.over ? "over" : "running";
    const card = h("a", `table-card ${state}`);
    card.href = `/games/${encodeURIComponent(g.id)}`;
    card.dataset.game = g.id;
    card.dataset.state = state;
    card.dataset.seq = g.seq;
    const winners = (g.winners || []).map((seat) => g.players[seat]).join(" and ");
    const ended = { void: "void: voided by the arbiter", closed: "closed by the arbiter" }[g.ending]
      || `finished after ${g.seq} rows${winners ? ` · won by ${winners}` : ""}`;
    const status = g.waiting ? "waiting for seat entropy" : g.over ? ended : `seq ${g.seq} · round ${g.round} · ${g.phase}`;
    if (g.ending) card.dataset.ending = g.ending;
    card.append(h("h3", null, g.title, h("span", "quiet", g.id)), h("div", "quiet", status));
    g.players.forEach((name, seat) => {
      const acting = (g.to_act || []).includes(name);
      const won = (g.winners || []).includes(seat) ? " ★" : "";
      card.append(h("div", "score", h("span", null, acting ? "▸ " : "", name, won), h("strong", null, g.scores ? g.scores[seat] : "")));
    });
    return card;
  }

  function draw(games) {
    const groups = new Map();
    for (const g of games) {
      const key = g.tournament || "";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(g);
    }
    const order = (g) => (g.waiting ? 1 : g.over ? 2 : 0);
    board.replaceChildren(...[...groups.entries()].map(([name, list]) =>
      h("section", null, h("h2", null, name ? `Tournament ${name}` : "Games outside a tournament"),
        h("div", "tables", list.sort((a, b) => order(a) - order(b)).map(tableCard)))));
    if (!games.length) board.append(h("p", "quiet", "No games yet."));
  }

  async function refresh() {
    try {
      const reply = await fetch(`/board.json${tournament ? `?tournament=${encodeURIComponent(tournament)}` : ""}`);
      const found = await reply.json();
      draw(found.games);
      const head = found.tree_head;
      const signed = head ? ` · log tree head: ${head.size} rows, root ${head.root.slice(0, 16)}…, signed ${head.signed_at}` +
        (head.witnesses ? `, co-signed by ${head.witnesses} witness(es)` : "") : "";
      updated.textContent = `updated ${new Date().toLocaleTimeString()}${signed}`;
    } catch (e) {
      updated.textContent = "cannot reach the server; trying again";
    }
  }

  refresh();
  setInterval(refresh, 3000);
})();
