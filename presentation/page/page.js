/* feastlog replay page: rebuilds each step's view from the page's data and draws it.
 *
 * Every drawn value carries data-path (where it sits in the view) and data-v (its JSON),
 * so what the page shows can be checked against the replay API.  Nothing here decides
 * who sees what: the views in the data are already the viewer's.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("feastlog-data").textContent);
  const game = data.game;
  const names = game.seats;
  const faces = data.cards || {};
  const steps = [];
  const views = [];
  const $ = (id) => document.getElementById(id);
  const SEAT_COLOURS = ["#c8324b", "#00798c", "#d98e04", "#4c8c2b", "#7d4fa1", "#2e4057"];
  const GEMS = ["blue", "green", "red", "yellow"];
  let cur = 0;
  let timer = null;
  let view = null; // the view being drawn, for bind()

  /* ---- the steps ---- */

  function applyPatch(before, ops) {
    let root = JSON.parse(JSON.stringify(before));
    for (const op of ops) {
      const path = op[0];
      if (path.length === 0) { root = op[1]; continue; }
      let parent = root;
      for (const key of path.slice(0, -1)) parent = parent[key];
      if (op.length === 1) delete parent[path[path.length - 1]];
      else parent[path[path.length - 1]] = op[1];
    }
    return root;
  }

  function add(entry) {
    if (entry.cards) Object.assign(faces, entry.cards);
    const next = "view" in entry ? entry.view : applyPatch(views[views.length - 1], entry.patch);
    steps.push(entry);
    views.push(next);
  }

  data.steps.forEach(add);

  /* ---- drawing helpers ---- */

  function at(path) {
    let value = view;
    for (const key of path) value = value == null ? undefined : value[key];
    return value;
  }

  // h("div", {cls, path, title, label}, ...children): an element; with path, bound to the view
  function h(tag, opts, ...kids) {
    const el = document.createElement(tag);
    const o = opts || {};
    if (o.cls) el.className = o.cls;
    if (o.path) {
      el.dataset.path = o.path.join(".");
      el.dataset.v = JSON.stringify(at(o.path) === undefined ? null : at(o.path));
    }
    if (o.title) el.title = o.title;
    if (o.label) el.setAttribute("aria-label", o.label);
    if (o.colour) el.style.setProperty("--seat", o.colour);
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  const seatName = (seat) => (seat === null || seat === undefined ? "nobody" : names[seat] || `seat ${seat}`);
  const seatColour = (seat) => SEAT_COLOURS[seat % SEAT_COLOURS.length];
  const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const slug = (text) => String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-");

  function who(seat, path) {
    return h("span", { cls: "who", path, colour: seatColour(seat ?? 0), title: `seat ${seat}` }, seatName(seat));
  }

  function seats(list, path) {
    const shown = (list || []).map(seatName).join(", ") || "nobody";
    return h("span", { cls: "who-list", path, title: `seats ${(list || []).join(", ")}` }, shown);
  }

  function stat(label, path, shown) {
    const value = at(path);
    const text = shown !== undefined ? shown : value === null ? "—" : typeof value === "boolean" ? (value ? "yes" : "no") : value;
    return h("div", { cls: "stat" }, h("span", { cls: "label" }, label), " ", h("span", { cls: "value", path }, text));
  }

  function flag(label, path) {
    return at(path) ? h("span", { cls: `flag flag-${slug(label)}`, path }, label) : h("span", { cls: "flag off", path, label: `not ${label}` });
  }

  function zone(title, path, kids, cls) {
    return h("section", { cls: `zone ${cls || ""}` }, h("h3", null, title), h("div", { cls: "cards", path }, kids));
  }

  function pawn(seat, path) {
    return h("span", { cls: "pawn", path, colour: seatColour(seat), label: `${seatName(seat)} (seat ${seat})`, title: `${seatName(seat)} (seat ${seat})` }, seatName(seat).slice(0, 1));
  }

  function gem(colour, path) {
    return h("span", { cls: `gem gem-${colour}`, path, label: `${colour} gem`, title: colour });
  }

  function face(key) {
    return faces[key] || null;
  }

  function hidden(text, path) {
    return h("div", { cls: "hidden-cards", path }, text);
  }

  function statusBar(kids) {
    return h("div", { cls: "status" }, kids);
  }

  function common(extra) {
    return statusBar([
      h("span", { cls: "kind", path: ["kind"], title: view.kind }, game.title),
      stat("round", ["round"]),
      stat("phase", ["phase"]),
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "to act"), " ", seats(view.to_act, ["to_act"])),
      flag("game over", ["over"]),
      extra,
    ]);
  }

  function seatPanel(seat, path, kids, extraCls) {
    const mine = data.viewer.id === `seat:${seat}`;
    const acting = (view.to_act || []).includes(seat);
    const cls = `seat ${mine ? "mine" : ""} ${acting ? "acting" : ""} ${extraCls || ""}`;
    return h("section", { cls, colour: seatColour(seat) },
      h("h3", null, h("span", { cls: "seat-name", path: [...path, "name"] }, at([...path, "name"])),
        h("span", { cls: "seat-no", path: [...path, "seat"], title: `seat ${seat}` }, `seat ${seat}`),
        mine ? h("span", { cls: "you" }, "you") : null,
        acting ? h("span", { cls: "to-act" }, "to act") : null),
      kids);
  }

  /* ---- Bon Appetit! ---- */

  function dishCard(dish, path, big) {
    if (!dish) return h("div", { cls: "card empty", path }, "no dish");
    return h("div", { cls: `card dish type-${slug(dish.type)} ${big ? "big" : ""}`, path },
      h("div", { cls: "band" }, dish.type),
      h("div", { cls: "name" }, dish.name),
      h("div", { cls: "points" }, `${dish.points}`, h("small", null, " pts")),
      h("div", { cls: "text" }, dish.ability));
  }

  function dishByName(name, path) {
    const known = face(name);
    return known ? dishCard(known, path) : h("div", { cls: "card dish", path }, h("div", { cls: "name" }, name));
  }

  function gems(list, path) {
    return h("span", { cls: "gems", path }, (list || []).map((g, i) => gem(g, [...path, i])));
  }

  function drawBonAppetit() {
    const v = view;
    const out = [common([
      stat("of rounds", ["rounds"]),
      stat("tie-break round", ["tie_round"]),
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "starting player"), " ", who(v.first_seat, ["first_seat"])),
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "last winner"), " ", who(v.last_winner, ["last_winner"])),
    ])];
    const gemCard = h("section", { cls: "zone gem-card" }, h("h3", null, "Gem Card"),
      h("div", { cls: "gem-values", path: ["gem_values"] },
        GEMS.filter((c) => c in v.gem_values).map((c) =>
          h("div", { cls: "gem-value" }, gem(c, null), h("span", { cls: "value", path: ["gem_values", c], label: `${c} is worth ${v.gem_values[c]}` }, v.gem_values[c])))));
    const auction = h("section", { cls: "zone auction" }, h("h3", null, "Up for auction"), dishCard(v.dish, ["dish"], true));
    const row = zone("Menu row", ["menu_row"], v.menu_row.map((d, i) => dishCard(d, ["menu_row", i])));
    const piles = h("section", { cls: "zone piles" }, h("h3", null, "Piles"),
      stat("dish deck", ["deck_count"]), stat("gems in the bag", ["bag_count"]),
      stat("removed unseen", ["removed_unseen"]));
    out.push(h("div", { cls: "centre" }, gemCard, auction, row, piles));
    out.push(zone("Removed dishes", ["removed"], v.removed.map((n, i) => dishByName(n, ["removed", i])), "small"));
    out.push(h("div", { cls: "seats" }, v.seats.map((s, i) => {
      const p = ["seats", i];
      return seatPanel(s.seat, p, [
        h("div", { cls: "row" }, stat("points", [...p, "points"]), stat("gems held", [...p, "gem_count"])),
        "hand" in s ? h("div", { cls: "hand" }, h("span", { cls: "label" }, "hand "), gems(s.hand, [...p, "hand"]))
          : h("div", { cls: "hidden-cards" }, `${count(s.gem_count, "gem")}, colours hidden`),
        "bidding" in s ? h("div", { cls: "row" }, flag("bidding", [...p, "bidding"]), flag("has bid", [...p, "has_bid"])) : null,
        "on_table" in s ? h("div", { cls: "bid" }, h("span", { cls: "label" }, "on the table "), gems(s.on_table, [...p, "on_table"])) : null,
        "sealed_bid" in s ? h("div", { cls: "bid sealed" }, h("span", { cls: "label" }, "sealed bid "), gems(s.sealed_bid, [...p, "sealed_bid"])) : null,
        zone("Dishes won", [...p, "dishes"], s.dishes.map((d, k) => dishCard(d, [...p, "dishes", k])), "small"),
      ]);
    })));
    const secret = [];
    if ("deck" in v) secret.push(zone("Dish deck, in order", ["deck"], v.deck.map((n, i) => dishByName(n, ["deck", i])), "small"));
    if ("set_aside" in v) secret.push(zone("Removed unseen", ["set_aside"], v.set_aside.map((n, i) => dishByName(n, ["set_aside", i])), "small"));
    if ("bag" in v) secret.push(h("section", { cls: "zone" }, h("h3", null, "The bag"), gems(v.bag, ["bag"])));
    if (secret.length) out.push(h("div", { cls: "secret" }, h("h3", null, "Behind the screen"), secret));
    if ("scores" in v) {
      out.push(h("section", { cls: "zone final" }, h("h3", null, "Final count"),
        h("div", { cls: "winners", path: ["winners"], title: `seats ${v.winners.join(", ")}` }, "winner: ", v.winners.map(seatName).join(" and ") || "nobody"),
        v.scores.map((pts, i) => h("div", { cls: "final-line" }, seatName(i), ": ",
          h("span", { path: ["scores", i] }, pts), " points, gems worth ",
          h("span", { path: ["gem_worth", i] }, v.gem_worth[i])))));
    }
    out.push(options());
    return out;
  }

  function options() {
    const opts = view.options || {};
    return h("footer", { cls: "options" }, "options: ",
      Object.keys(opts).map((k) => h("span", { cls: "option", path: ["options", k] }, `${k} = ${opts[k]} `)));
  }

  /* ---- Menu Masters ---- */

  const STORE_TITLES = { "produce-stand": "Produce Stand", "butcher-shop": "Butcher Shop", bakery: "Bakery", supermarket: "Supermarket" };

  function ingredientCard(card, path) {
    if (!card) return h("div", { cls: "card", path }, "?");
    return h("div", { cls: `card ingredient deck-${card.deck}`, path, title: `${card.id} (${card.deck})` },
      h("div", { cls: "band" }, STORE_TITLES[card.deck] || card.deck),
      card.ingredients.map((name, i) => h("div", { cls: "line" },
        h("span", { cls: "name" }, name), " ", h("span", { cls: "stars" }, `${card.stars[i]}★`))));
  }

  function menuCard(menu, path) {
    if (!menu) return h("div", { cls: "card", path }, "?");
    return h("div", { cls: "card menu", path, title: menu.id },
      h("div", { cls: "band" }, "Menu"),
      h("div", { cls: "name" }, menu.name),
      h("ul", { cls: "needs" }, menu.ingredients.map((n) => h("li", null, n))));
  }

  function byId(id, path) {
    const known = face(id);
    if (!known) return h("div", { cls: "card", path }, id);
    return "deck" in known ? ingredientCard(known, path) : menuCard(known, path);
  }

  function completedMenu(done, path) {
    const uses = done.uses.map((u) => `${u.ingredient}: ${u.cards.join(" + ")} (${u.stars}★)`).join("; ");
    return h("div", { cls: "completed", path, title: uses },
      menuCard(done.menu, null),
      h("div", { cls: "done-line" }, `${done.stars}★ · ${done.source}`),
      h("ul", { cls: "uses" }, done.uses.map((u) => h("li", null, `${u.ingredient} ${u.stars}★`))));
  }

  function drawMenuMasters() {
    const v = view;
    const turn = v.turn;
    const out = [common([
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "first chef"), " ", who(v.first_chef, ["first_chef"])),
      stat("coins in the bank", ["bank"]), stat("coins in the box", ["box"]),
      stat("Menu deck", ["menu_deck_count"]), flag("last round", ["last_round"]),
      "end" in v ? stat("ended by", ["end"]) : null,
      turn ? h("div", { cls: "stat turn", path: ["turn"], title: `seat ${turn.seat} at ${turn.store}` }, "purchase turn: ",
        seatName(turn.seat), " at the ", STORE_TITLES[turn.store] || turn.store,
        turn.bought ? ", has bought" : `, next card costs ${turn.cost}`,
        turn.cannot_buy ? h("span", { cls: "cannot-buy", path: ["turn", "cannot_buy"], title: turn.cannot_buy },
          turn.cannot_buy === "sold_out" ? " (the store has sold out: complete Menus, then leave)" : " (cannot pay: complete Menus, then leave)") : null,
        h("span", { cls: "quiet" }, ` (seat ${turn.seat}, ${turn.store}${turn.cost === null ? "" : `, cost ${turn.cost}`}, bought: ${turn.bought}${turn.cannot_buy ? `, ${turn.cannot_buy}` : ""})`))
        : h("div", { cls: "stat turn", path: ["turn"] }, "no purchase turn"),
    ])];
    out.push(h("div", { cls: "stores" }, v.stores.map((s, i) => {
      const p = ["stores", i];
      return h("section", { cls: `zone store deck-${s.store}`, title: s.store },
        h("h3", null, h("span", { path: [...p, "title"] }, s.title), h("span", { cls: "quiet", path: [...p, "store"], title: s.store })),
        h("div", { cls: "row" },
          h("div", { cls: "stat" }, h("span", { cls: "label" }, "owner"), " ", who(s.owner, [...p, "owner"])),
          stat("coins on the board", [...p, "coins_on_board"]), stat("deck", [...p, "deck_count"])),
        h("div", { cls: "line-up" }, h("span", { cls: "label" }, "line "), h("span", { cls: "pawns", path: [...p, "line"] }, s.line.map((seat, k) => pawn(seat, [...p, "line", k])))),
        h("div", { cls: "cards window", path: [...p, "window"] }, s.window.map((c, k) => ingredientCard(c, [...p, "window", k]))),
        "deck" in s ? h("details", { cls: "zone secret-deck", path: [...p, "deck"] }, h("summary", null, `deck, in order (${s.deck.length} cards)`),
          h("div", { cls: "cards small" }, s.deck.map((id, k) => byId(id, [...p, "deck", k])))) : null);
    })));
    out.push(zone("Community Menus", ["community"], v.community.map((m, i) => menuCard(m, ["community", i]))));
    out.push(h("div", { cls: "seats" }, v.chefs.map((c, i) => {
      const p = ["chefs", i];
      return seatPanel(c.seat, p, [
        h("div", { cls: "row" }, stat("stars", [...p, "stars"]), stat("coins", [...p, "coins"]),
          stat("pawns left", [...p, "pawns_left"]), flag("coin waiting", [...p, "coin_waiting"]),
          stat("secret Menus", [...p, "menu_count"])),
        zone("Basket", [...p, "basket"], c.basket.map((card, k) => ingredientCard(card, [...p, "basket", k])), "small"),
        "menus" in c ? zone("Secret Menus", [...p, "menus"], c.menus.map((m, k) => menuCard(m, [...p, "menus", k])), "small private")
          : h("div", { cls: "hidden-cards" }, `${count(c.menu_count, "secret Menu")}, hidden`),
        zone("Completed", [...p, "completed"], c.completed.map((d, k) => completedMenu(d, [...p, "completed", k])), "small"),
      ]);
    })));
    if ("menu_deck" in v) {
      out.push(h("div", { cls: "secret" }, h("h3", null, "Behind the screen"),
        zone("Menu deck, in order", ["menu_deck"], v.menu_deck.map((id, i) => byId(id, ["menu_deck", i])), "small")));
    }
    if ("scores" in v) {
      out.push(h("section", { cls: "zone final" }, h("h3", null, "Final count"),
        h("div", { cls: "winners", path: ["winners"], title: `seats ${v.winners.join(", ")}` }, "winner: ", v.winners.map(seatName).join(" and ")),
        v.scores.map((pts, i) => h("div", { cls: "final-line" }, seatName(i), ": ", h("span", { path: ["scores", i] }, pts), " stars"))));
    }
    return out;
  }

  /* ---- Picky Eaters ---- */

  function foodCard(id, path) {
    const known = face(id) || { kind: String(id).split("-")[0], name: id };
    return h("div", { cls: `card food ${known.kind}`, path, title: id },
      h("div", { cls: "band" }, known.kind),
      h("div", { cls: "name" }, known.name),
      known.kind === "recipe" ? h("ul", { cls: "needs" }, known.ingredients.map((n) => h("li", null, n))) : null,
      known.kind === "item" ? h("div", { cls: "text" }, known.text) : null);
  }

  function guestCard(guest, path) {
    const list = (label, key) => h("div", { cls: `likes ${key}` }, h("span", { cls: "label" }, label), " ", guest[key].join(", ") || "—");
    return h("div", { cls: "card guest", path, title: guest.guest },
      h("div", { cls: "band" }, "Guest"),
      h("div", { cls: "name" }, guest.name),
      h("div", { cls: "role" }, guest.role),
      list("♥ loves", "favorite"), list("likes", "like"), list("dislikes", "dislike"), list("cannot eat", "restriction"));
  }

  function guestBack(id, path) {
    const known = face(id) || { name: id, role: "" };
    return h("div", { cls: "card guest", path, title: id },
      h("div", { cls: "band" }, "Guest"), h("div", { cls: "name" }, known.name), h("div", { cls: "role" }, known.role));
  }

  function placedRecipe(recipe, path) {
    return h("div", { cls: "placed", path, title: recipe.recipe },
      foodCard(recipe.recipe, null),
      h("div", { cls: "items", path: [...path, "items"] }, recipe.items.map((id, k) => foodCard(id, [...path, "items", k]))));
  }

  function scoreLine(row, path) {
    return h("div", { cls: "score-line", path, title: `${row.recipe} ${row.items.join(" ")}` },
      h("strong", null, row.name), ` base ${row.base}`,
      row.guests.map((g) => ` · ${g.name} (${g.guest}): ${g.listed}→${g.counted} ${g.points > 0 ? "+" : ""}${g.points}`),
      ` · herbs ${row.herbs} = ${row.points}`);
  }

  function drawPickyEaters() {
    const v = view;
    const out = [common([
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "turn"), " ", who(v.turn, ["turn"])),
      h("div", { cls: "stat" }, h("span", { cls: "label" }, "first player"), " ", who(v.first_player, ["first_player"])),
      stat("Food deck", ["food_deck_size"]), stat("Guest deck", ["guest_deck_size"]),
      stat("pack", ["pack"]),
    ])];
    out.push(zone("Guests", ["guests"], v.guests.map((g, i) => guestCard(g, ["guests", i]))));
    out.push(zone("Market", ["market"], v.market.map((id, i) => foodCard(id, ["market", i]))));
    const top = v.discard.length ? (face(v.discard[v.discard.length - 1]) || {}).name || v.discard[v.discard.length - 1] : "empty";
    out.push(h("section", { cls: "zone discard" }, h("h3", null, "Discard pile"),
      h("details", { path: ["discard"] }, h("summary", null, `${v.discard.length} cards, top: ${top}`),
        h("div", { cls: "cards small" }, v.discard.map((id, i) => foodCard(id, ["discard", i]))))));
    out.push(h("div", { cls: "seats" }, v.players.map((pl, i) => {
      const p = ["players", i];
      return seatPanel(pl.seat, p, [
        h("div", { cls: "row" }, stat("points", [...p, "points"]), stat("cards in hand", [...p, "hand_size"]),
          stat("Recipe slots used", [...p, "slots_used"]), flag("passed", [...p, "passed"])),
        pl.hand === null ? hidden(`${count(pl.hand_size, "card")}, hidden`, [...p, "hand"])
          : zone("Hand", [...p, "hand"], pl.hand.map((id, k) => foodCard(id, [...p, "hand", k])), "small private"),
        zone("Recipes", [...p, "recipes"], pl.recipes.map((r, k) => placedRecipe(r, [...p, "recipes", k])), "small"),
        zone("Fancy Silverware", [...p, "silverware"], pl.silverware.map((id, k) => foodCard(id, [...p, "silverware", k])), "small"),
      ]);
    })));
    const secret = [];
    if ("food_deck" in v) secret.push(zone("Food deck, in order", ["food_deck"], v.food_deck.map((id, i) => foodCard(id, ["food_deck", i])), "small"));
    if ("guest_deck" in v) secret.push(zone("Guest deck, in order", ["guest_deck"], v.guest_deck.map((id, i) => guestBack(id, ["guest_deck", i])), "small"));
    if (secret.length) out.push(h("div", { cls: "secret" }, h("h3", null, "Behind the screen"), secret));
    if ("scores" in v) {
      out.push(h("section", { cls: "zone final" }, h("h3", null, "Final count"),
        h("div", { cls: "winners", path: ["winners"], title: `seats ${v.winners.join(", ")}` }, "winner: ", v.winners.map(seatName).join(" and ")),
        v.scores.map((pts, i) => h("div", { cls: "final-line" }, seatName(i), ": ", h("span", { path: ["scores", i] }, pts), " points")),
        h("div", { cls: "breakdown", path: ["table"] }, v.table.map((row, i) => h("div", { cls: "breakdown-seat", path: ["table", i] },
          h("strong", null, `${row.name} (seat ${row.seat}): ${row.points}`),
          row.recipes.map((r, k) => scoreLine(r, ["table", i, "recipes", k])),
          row.silverware.map((s, k) => h("div", { cls: "score-line", path: ["table", i, "silverware", k], title: s.item }, `Fancy Silverware ${s.points}`)))))));
    }
    return out;
  }

  const DRAW = { "bon-appetit": drawBonAppetit, "menu-masters": drawMenuMasters, "picky-eaters": drawPickyEaters };

  /* ---- the page around the table ---- */

  function actorName(actor) {
    if (actor === "server") return "the server";
    if (actor === "arbiter") return "the arbiter";
    if (actor.startsWith("seat:")) return seatName(Number(actor.slice(5)));
    return actor;
  }

  function refusalsAt(seq) {
    return data.rejections.filter((r) => r.after_seq === seq);
  }

  function indexOfSeq(seq) {
    let found = 0;
    steps.forEach((s, i) => { if (s.seq <= seq) found = i; });
    return found;
  }

  function drawNow() {
    const step = steps[cur];
    $("now-title").textContent = `seq ${step.seq}: ${step.kind.replace("_", " ")} by ${actorName(step.actor)}`;
    const list = $("now");
    list.replaceChildren();
    for (const line of step.lines) list.append(h("li", null, line));
    if (!step.lines.length) list.append(h("li", { cls: "quiet" }, "(nothing you could see)"));
    for (const r of refusalsAt(step.seq)) {
      list.append(h("li", { cls: "refused" }, `Refused, ${actorName(r.actor)}: ${r.rule_id ? r.rule_id + ": " : ""}${r.message}`));
    }
  }

  function drawLog() {
    const log = $("log");
    log.replaceChildren();
    steps.forEach((step, i) => {
      const gone = step.superseded_by ? ` (superseded by the rewind at seq ${step.superseded_by})` : "";
      const item = h("li", { cls: `${step.ruling ? "ruling" : ""}${gone ? " superseded" : ""}` },
        h("button", { cls: "jump", label: `seq ${step.seq}`, title: `by ${actorName(step.actor)}` }, h("span", { cls: "n" }, step.seq), " ",
          (step.lines.length ? step.lines.join(" ") : `${step.kind.replace("_", " ")} by ${actorName(step.actor)}`) + gone));
      item.dataset.index = i;
      item.querySelector("button").addEventListener("click", () => go(i));
      log.append(item);
      for (const r of refusalsAt(step.seq)) {
        const refused = h("li", { cls: "refused" }, h("button", { cls: "jump" },
          `refused after ${r.after_seq}: ${actorName(r.actor)} ${r.rule_id}`));
        refused.querySelector("button").addEventListener("click", () => go(i));
        log.append(refused);
      }
    });
  }

  function drawMarks() {
    const marks = $("marks");
    marks.replaceChildren();
    const span = Math.max(1, steps.length - 1);
    const place = (el, i) => { el.style.left = `${(100 * i) / span}%`; el.addEventListener("click", () => go(i)); marks.append(el); };
    steps.forEach((step, i) => {
      if (step.ruling) {
        const mark = h("button", { cls: "mark ruling", title: `seq ${step.seq}: arbiter ruling — ${step.lines.join(" ")}`, label: `ruling at seq ${step.seq}` });
        mark.dataset.mark = "ruling";
        mark.dataset.seq = step.seq;
        place(mark, i);
      }
    });
    for (const r of data.rejections) {
      const mark = h("button", { cls: "mark refused", title: `after seq ${r.after_seq}: ${actorName(r.actor)} refused — ${r.rule_id} ${r.message}`, label: `refusal after seq ${r.after_seq}` });
      mark.dataset.mark = "rejection";
      mark.dataset.seq = r.after_seq;
      place(mark, indexOfSeq(r.after_seq));
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, val] of Object.entries(attrs || {})) el.setAttribute(k, val);
    return el;
  }

  function chart(box, title, series) {
    box.replaceChildren();
    if (!series.length || steps.length < 1) return;
    const W = 600, H = 190, L = 34, R = 8, T = 8, B = 22;
    const all = series.flatMap((s) => s.values);
    const lo = Math.min(0, ...all), hi = Math.max(1, ...all);
    const x = (i) => L + ((W - L - R) * i) / Math.max(1, steps.length - 1);
    const y = (val) => T + ((H - T - B) * (hi - val)) / Math.max(1, hi - lo);
    const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" });
    for (const tick of [lo, Math.round((lo + hi) / 2), hi]) {
      plot.append(svg("line", { x1: L, x2: W - R, y1: y(tick), y2: y(tick), class: "grid" }));
      const label = svg("text", { x: L - 4, y: y(tick) + 4, "text-anchor": "end", class: "tick" });
      label.textContent = tick;
      plot.append(label);
    }
    for (const s of series) {
      const points = s.values.map((val, i) => `${x(i).toFixed(1)},${y(val).toFixed(1)}`).join(" ");
      plot.append(svg("polyline", { points, fill: "none", stroke: s.colour, "stroke-width": 2.5, class: "series" }));
    }
    const cursor = svg("line", { x1: x(cur), x2: x(cur), y1: T, y2: H - B, class: "cursor" });
    plot.append(cursor);
    plot.addEventListener("click", (event) => {
      const box2 = plot.getBoundingClientRect();
      const fraction = ((event.clientX - box2.left) * (W / box2.width) - L) / (W - L - R);
      go(Math.round(Math.max(0, Math.min(1, fraction)) * (steps.length - 1)));
    });
    const legend = h("div", { cls: "legend" }, series.map((s) =>
      h("span", { cls: "key", colour: s.colour }, `${s.label} ${s.values[cur] ?? ""}`)));
    box.append(h("h3", null, title), plot, legend);
  }

  function drawCharts() {
    const scores = names.map((name, seat) => ({
      label: name, colour: seatColour(seat), values: steps.map((s) => (s.scores || [])[seat] || 0),
    }));
    chart($("chart"), game.kind === "menu-masters" ? "Stars" : "Points", scores);
    if (game.kind === "bon-appetit") {
      const gemColours = { blue: "#2f6fdb", green: "#2e9e4f", red: "#d64545", yellow: "#d9a900" };
      chart($("gem-chart"), "Gem values", GEMS.map((c) => ({
        label: c, colour: gemColours[c], values: views.map((v) => (v.gem_values || {})[c] || 0),
      })));
    }
  }

  function drawResult() {
    const result = data.result;
    const box = $("result");
    if (!result) { box.hidden = true; return; }
    const tiebreak = { "bon-appetit": "gems' worth", "menu-masters": "coins", "picky-eaters": "tie-break order" }[game.kind] || "tie-break";
    const rows = names.map((name, seat) => h("tr", { cls: result.winners.includes(seat) ? "winner" : "" },
      h("td", null, result.winners.includes(seat) ? "★ " : "", name),
      h("td", { cls: "num" }, result.points[seat] ?? ""),
      h("td", { cls: "num" }, result.adjustments[seat] ? `${result.adjustments[seat] > 0 ? "+" : ""}${result.adjustments[seat]}` : ""),
      h("td", { cls: "num" }, result.tiebreak.length ? result.tiebreak[seat] : ""),
      h("td", null, result.forfeited.includes(seat) ? "forfeited" : "")));
    const notes = [result.voided ? "The arbiter voided this game." : "", result.closed ? "The arbiter closed this game." : ""].filter(Boolean);
    box.replaceChildren(h("h2", null, "Final result"),
      h("table", null, h("thead", null, h("tr", null, ["player", "points", "arbiter", tiebreak, ""].map((t) => h("th", null, t)))),
        h("tbody", null, rows)),
      notes.map((n) => h("p", null, n)));
    box.hidden = false;
  }

  function show(i) {
    cur = Math.max(0, Math.min(steps.length - 1, i));
    view = views[cur];
    const step = steps[cur];
    const draw = DRAW[game.kind];
    $("table").replaceChildren(...(draw ? draw() : [h("pre", null, JSON.stringify(view, null, 1))]));
    view = null;
    const slider = $("slider");
    slider.max = steps.length - 1;
    slider.value = cur;
    $("seq").textContent = `seq ${step.seq} / ${steps[steps.length - 1].seq}`;
    document.body.dataset.seq = step.seq;
    drawNow();
    drawCharts();
    markCurrent();
    try { history.replaceState(null, "", `#seq=${step.seq}`); } catch (e) { /* file pages in some browsers */ }
  }

  // highlight the step in the timeline list; scroll it into sight at the next frame, so
  // stepping quickly lays the page out once per frame, not once per step
  let scrollPending = false;
  function markCurrent() {
    const log = $("log");
    const before = log.querySelector("li.current");
    if (before) before.classList.remove("current");
    const current = log.querySelector(`li[data-index="${cur}"]`);
    if (current) current.classList.add("current");
    if (scrollPending) return;
    scrollPending = true;
    requestAnimationFrame(() => {
      scrollPending = false;
      const now = log.querySelector("li.current");
      if (now) log.scrollTop = now.offsetTop - log.offsetTop - log.clientHeight / 2;
    });
  }

  function go(i) { show(i); }

  function fromHash() {
    const found = /(?:^#|&)seq=(\d+)/.exec(location.hash);
    return found ? indexOfSeq(Number(found[1])) : null;
  }

  function play() {
    if (timer) { clearInterval(timer); timer = null; $("play").classList.remove("on"); return; }
    $("play").classList.add("on");
    timer = setInterval(() => { if (cur >= steps.length - 1) play(); else go(cur + 1); }, 900);
  }

  function large() {
    const on = document.body.classList.toggle("large");
    $("large").setAttribute("aria-pressed", String(on));
  }

  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(cur - 1));
  $("next").addEventListener("click", () => go(cur + 1));
  $("last").addEventListener("click", () => go(steps.length - 1));
  $("play").addEventListener("click", play);
  $("large").addEventListener("click", large);
  $("slider").addEventListener("input", (e) => go(Number(e.target.value)));
  window.addEventListener("hashchange", () => { const i = fromHash(); if (i !== null && i !== cur) go(i); });
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target instanceof HTMLInputElement && e.target.id === "slider" && e.key !== "Home" && e.key !== "End") return;
    const keys = { ArrowLeft: () => go(cur - 1), ArrowRight: () => go(cur + 1), Home: () => go(0), End: () => go(steps.length - 1), " ": play, l: large, L: large };
    const action = keys[e.key];
    if (action && !(e.target instanceof HTMLButtonElement && e.key === " ")) { e.preventDefault(); action(); }
  });

  const sub = [`game ${game.id}`, `ruleset ${game.ruleset}`, `pack ${game.pack}`, game.tournament ? `tournament ${game.tournament}` : "", `as ${data.viewer.label}`];
  $("sub").textContent = sub.filter(Boolean).join(" · ");
  if (/(?:^#|&)large=1/.test(location.hash)) large();

  function live(status) {
    const badge = $("live");
    badge.hidden = false;
    badge.textContent = status;
    badge.dataset.state = status;
    document.dispatchEvent(new CustomEvent("feastlog:live", { detail: status })); // seat.js
  }

  if (data.live) {
    const tools = document.querySelector(".tools");
    const board = h("a", { cls: "link" }, "all tables");
    board.href = data.live.board;
    tools.prepend(board);
    if (data.viewer.id === "spectator") {
      const seat = h("a", { cls: "link" }, "your seat");
      seat.href = data.live.seat;
      tools.prepend(seat);
    } else {
      const leave = h("form", { cls: "leave" }, h("button", { title: "Forget the token this browser keeps for this game" }, "forget my token"));
      leave.method = "post";
      leave.action = `${data.live.seat}/forget`;
      tools.prepend(leave);
    }
    live("live");
    const last = steps.length ? steps[steps.length - 1].seq : 0;
    const source = new EventSource(`${data.live.events}?after=${last}`);
    source.addEventListener("step", (e) => {
      const entry = JSON.parse(e.data);
      if (steps.length && entry.seq <= steps[steps.length - 1].seq) return;
      const following = cur === steps.length - 1;
      add(entry);
      drawLog();
      drawMarks();
      show(following ? steps.length - 1 : cur);
      document.dispatchEvent(new CustomEvent("feastlog:step", { detail: entry })); // seat.js
    });
    source.addEventListener("end", (e) => {
      data.result = JSON.parse(e.data);
      source.close();
      drawResult();
      live("finished");
    });
    source.addEventListener("open", () => live("live"));
    source.addEventListener("error", () => { if (source.readyState !== EventSource.CLOSED) live("reconnecting"); });
  }

  drawLog();
  drawMarks();
  drawResult();
  const start = fromHash();
  show(start !== null ? start : data.live ? steps.length - 1 : 0);

  // for people and tests poking at the page: the views exactly as the data holds them
  window.feastlog = {
    seq: () => steps[cur].seq,
    seqs: () => steps.map((s) => s.seq),
    view: (seq) => views[steps.findIndex((s) => s.seq === seq)],
    go: (seq) => go(indexOfSeq(seq)),
  };
})();
