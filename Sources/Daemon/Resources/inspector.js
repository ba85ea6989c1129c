"use strict";
const $ = (id) => document.getElementById(id);
const loginRequired = document.body.dataset.loginRequired === "true";

// The page's languages: the built-in catalogs and the agency's ([http] languages_dir), English first. Each catalog
// holds the page's own words ("text"), the verdict kinds, the instructions, the ticket's field labels, farecheck's
// sentences ("sentences", by their English template; see Explanation), and "about": the language's tag, its own
// name and the locale its dates and numbers are written by.
const catalogs = JSON.parse($("catalogs").textContent || "{}");
const languages = Object.keys(catalogs);
// The validator's time zone: the ticket's dates and times are said as the clock on the gate's wall says them.
const timeZone = document.body.dataset.timeZone || undefined;
const storedLanguage = "farecheck.language";

// The catalog's language for a tag: the tag's own (de-AT), else its language's (de); null when there is none.
function catalogFor(tag) {
  const wanted = String(tag || "").toLowerCase();
  if (!wanted) return null;
  const exact = languages.find((language) => language.toLowerCase() === wanted);
  if (exact) return exact;
  const primary = wanted.split("-")[0];
  return languages.find((language) => language.toLowerCase() === primary) || null;
}

// The inspector's choice on this page (the switch), else the validator's configured language, else the browser's
// languages in their order (a regional variant falling back to its language: de-AT → de), else English.
function chooseLanguage() {
  let chosen = null;
  try { chosen = localStorage.getItem(storedLanguage); } catch (error) { /* storage may be off */ }
  if (languages.includes(chosen)) return chosen;
  const configured = catalogFor(document.body.dataset.language);
  if (configured) return configured;
  for (const tag of navigator.languages || [navigator.language]) {
    const found = catalogFor(tag);
    if (found) return found;
  }
  return "en";
}
let language = chooseLanguage();
const catalog = () => catalogs[language] || catalogs.en || {};
// How dates and numbers are written: by the catalog's locale (English as in Britain: day before month, 24-hour
// clock, as in the rest of Europe where the page is used), else by its language.
const locale = () => (catalog().about || {}).locale || language;

// A word or phrase of the page's own, in the page's language (English when the catalog lacks it).
function text(id, ...values) {
  const phrase = (catalog().text || {})[id] ?? (catalogs.en.text || {})[id] ?? id;
  return phrase.replace(/\{(\d+)\}/g, (whole, index) => values[index] ?? whole);
}

// An entry of one of the catalog's lists (verdict kinds, actions, documents, labels), or `fallback`.
function term(list, key, fallback) {
  const entry = (catalog()[list] || {})[key] ?? (catalogs.en[list] || {})[key];
  return entry ?? fallback;
}

function when(iso) {
  if (!iso) return null;
  const date = new Date(iso);
  if (isNaN(date)) return iso;
  try {
    return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short", timeZone }).format(date);
  } catch (error) {
    // A time zone this browser does not know: the browser's own.
    return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(date);
  }
}

// A length of time in its largest whole unit, in words: "5 minutes", "5 Minuten", "5 minutes".
function duration(seconds) {
  const [amount, unit] = seconds < 120 ? [seconds, "second"] : seconds < 7200 ? [seconds / 60, "minute"]
    : seconds < 172800 ? [seconds / 3600, "hour"] : [seconds / 86400, "day"];
  return new Intl.NumberFormat(locale(), { style: "unit", unit, unitDisplay: "long" }).format(Math.floor(amount));
}

function age(iso) {
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  const relative = new Intl.RelativeTimeFormat(locale(), { numeric: "always" });
  if (seconds < 90) return relative.format(-Math.round(seconds), "second");
  if (seconds < 5400) return relative.format(-Math.round(seconds / 60), "minute");
  if (seconds < 172800) return relative.format(-Math.round(seconds / 3600), "hour");
  return relative.format(-Math.round(seconds / 86400), "day");
}

// One of farecheck's sentences (an Explanation: an English template and the values it names) in the page's
// language, as nodes: the values are text, never markup. A sentence the catalog does not have is said in
// English and marked so (a screen reader then reads it as English).
function say(explanation, fallback) {
  if (!explanation || typeof explanation.template !== "string") {
    return fallback ? [englishSpan(fallback)] : [];
  }
  const verbatim = explanation.template === "{0}";
  const translated = language === "en" || explanation.template === "" ? explanation.template
    : verbatim ? null : (catalog().sentences || {})[explanation.template];
  const template = translated ?? explanation.template;
  const nodes = [];
  const parts = template.split(/(\{\d+\})/);
  for (const part of parts) {
    const place = /^\{(\d+)\}$/.exec(part);
    if (!place) {
      if (part) nodes.push(document.createTextNode(part));
      continue;
    }
    const argument = (explanation.arguments || [])[Number(place[1])];
    if (!argument) continue;
    if ("explanation" in argument) {
      nodes.push(...say(argument.explanation));
    } else if ("date" in argument) {
      nodes.push(document.createTextNode(when(argument.date)));
    } else if ("duration" in argument) {
      nodes.push(document.createTextNode(duration(argument.duration)));
    } else if ("number" in argument) {
      nodes.push(document.createTextNode(String(argument.number)));
    } else {
      nodes.push(document.createTextNode(String(argument.text ?? "")));
    }
  }
  if (translated === null || translated === undefined) {
    if (language === "en") return nodes;
    const span = document.createElement("span");
    span.lang = "en";
    span.append(...nodes);
    return [span];
  }
  return nodes;
}

// A document's one line in the page's language (its words are templates, its names the ticket's), without the
// product the facts already name first.
function documentSummary(document, product) {
  let explanation = document.summaryExplanation;
  if (!explanation) {
    const summary = String(document.summary || "");
    return product && summary.startsWith(product + ", ") ? summary.slice(product.length + 2) : summary;
  }
  const first = (explanation.arguments || [])[0] || {};
  if (product && first.text === product) {
    if (explanation.template === "{0}") return "";
    if (explanation.template === "{0}, {1}" && explanation.arguments[1].explanation) {
      explanation = explanation.arguments[1].explanation;
    }
  }
  return say(explanation).map((node) => node.textContent).join("");
}

function englishSpan(value) {
  const span = document.createElement("span");
  if (language !== "en") span.lang = "en";
  span.textContent = String(value);
  return span;
}

function show(element, value) {
  const empty = value === null || value === undefined || value === "";
  element.textContent = empty ? "" : String(value);
  element.hidden = empty;
}

function showNodes(element, nodes) {
  element.replaceChildren(...nodes);
  element.hidden = nodes.length === 0;
}

// A ticket id that is text (a UIC ticket key, a PNR) as its text; binary ids stay hex.
function ticketText(hex) {
  if (!hex || hex.length % 2) return hex;
  const bytes = hex.match(/../g).map((pair) => parseInt(pair, 16));
  return bytes.every((byte) => byte >= 0x20 && byte < 0x7f) ? String.fromCharCode(...bytes) : hex;
}

// The page's own words, where the document marks them (data-text), in the page's language.
function translateDocument() {
  document.documentElement.lang = language;
  document.title = text("title");
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = text(element.dataset.text);
  $("languages").setAttribute("aria-label", text("language"));
  $("languages").value = language;
  $("unreadable").setAttribute("aria-label", text("unreadableRecords"));
  $("warnings").setAttribute("aria-label", text("warnings"));
}

// The device clock behind the trusted-time floor: said above everything, until the clock is put right.
// Short, because the verdict's reason below says it in full.
let clockShown = null;
function showClockWarning(wallClock, floor) {
  clockShown = wallClock ? { wallClock, floor } : null;
  show($("clock-warning"), wallClock ? (floor ? text("clockWrongFloor", when(wallClock), when(floor))
    : text("clockWrong", when(wallClock))) : null);
}

// A field's label as the format names it, in the page's language: "document 2 places" is found as
// "document {0} places" with its number put back. A label the catalog lacks stays as the format names it.
function fieldLabel(label) {
  const numbered = /^(document|traveler) (\d+)(.*)$/.exec(label);
  if (numbered) {
    const translated = term("labels", numbered[1] + " {0}" + numbered[3], null);
    if (translated) return translated.replace("{0}", numbered[2]);
  }
  return term("labels", label, label);
}

// The holder check: each field the ticket carries about its holder (name, date of birth, the documents it names,
// an issuer's own words), to compare with an ID document. A ticket without them shows its one holder line.
function holderRows(event) {
  const check = event.holderCheck;
  if (check && typeof check === "object") {
    const rows = [];
    if (check.name) rows.push([text("holderName"), check.name]);
    if (check.dateOfBirth) rows.push([text("dateOfBirth"), birthDate(check.dateOfBirth)]);
    for (const id of Array.isArray(check.idDocuments) ? check.idDocuments : []) {
      if (id && id.number) rows.push([term("idDocuments", id.kind, text("idDocument")), id.number]);
    }
    if (check.note) rows.push([text("holder"), check.note]);
    if (rows.length) return rows;
  }
  return event.holder ? [[text("holder"), event.holder]] : [];
}

// A date of birth as the ticket states it: a whole date in the language's form, a year alone as a year.
function birthDate(value) {
  const full = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (full) {
    const date = new Date(Date.UTC(Number(full[1]), Number(full[2]) - 1, Number(full[3])));
    return new Intl.DateTimeFormat(locale(), { dateStyle: "long", timeZone: "UTC" }).format(date);
  }
  const month = /^(\d{4})-(\d{2})$/.exec(value);
  if (month) {
    const date = new Date(Date.UTC(Number(month[1]), Number(month[2]) - 1, 1));
    return new Intl.DateTimeFormat(locale(), { year: "numeric", month: "long", timeZone: "UTC" }).format(date);
  }
  return value;
}

function definitionList(list, rows, marker) {
  list.replaceChildren();
  for (const [label, value] of rows) {
    if (value === null || value === undefined || value === "") continue;
    const termNode = document.createElement("dt");
    termNode.textContent = label;
    const detail = document.createElement("dd");
    if (Array.isArray(value)) detail.append(...value); else detail.textContent = String(value);
    if (marker) {
      const badge = document.createElement("span");
      badge.className = "compare";
      badge.textContent = marker;
      detail.append(" ", badge);
    }
    list.append(termNode, detail);
  }
  return list.childElementCount;
}

let lastEvent = null;

function renderVerdict(event) {
  lastEvent = event;
  const panel = $("verdict");
  panel.dataset.state = event.verdict === "valid" ? "valid"
    : event.verdict === "clock-untrusted" ? "doubt" : "invalid";
  panel.dataset.verdict = event.verdict;
  show($("verdict-word"), term("verdicts", event.verdict, String(event.verdict).replace(/-/g, " ")));
  showNodes($("verdict-reason"), say(event.explanation, event.reason));
  // A ticket on a published blocklist: what to do, first and large (keep it, check the ID, refuse it).
  const revocation = event.revocation;
  const action = $("action");
  show(action, revocation ? term("actions", revocation.action, null) || term("actions", "refuse") : null);
  action.dataset.action = revocation ? revocation.action : "";

  const holder = holderRows(event);
  $("holder-check").hidden = definitionList($("holder-fields"), holder, text("compareMark")) === 0;

  const validity = [when(event.validFrom), when(event.validUntil)];
  const documents = Array.isArray(event.documents) ? event.documents : [];
  const rows = [
    [text("product"), event.product],
    ...documents.map((document, index) => [
      documents.length > 1 ? text("documentNumber", index + 1) : text("document"),
      term("documents", document.kind, document.kind) + ": " + documentSummary(document, event.product)
        + (documents.length > 1 && (document.validFrom || document.validUntil)
          ? " (" + (when(document.validFrom) || "\u2026") + " \u2013 " + (when(document.validUntil) || "\u2026")
            + ")" : "")]),
    [text("valid"), validity[0] || validity[1]
      ? (validity[0] || "\u2026") + " \u2013 " + (validity[1] || "\u2026") : null],
    [text("category"), [event.category ? term("categories", event.category, event.category) : null,
      event.passengers ? text(event.passengers === 1 ? "onePassenger" : "passengers", event.passengers) : null]
      .filter(Boolean).join(", ")],
    [text("zones"), Array.isArray(event.zones) ? event.zones.join(", ") : null],
    [text("issuer"), event.issuer],
    [text("ticket"), ticketText(event.ticketId)],
    // Validity cannot be judged, but whether the ticket is genuine can.
    [text("signature"), event.verdict === "clock-untrusted" ? term("signatures", event.signature, event.signature)
      + (event.signature === "valid" ? " " + text("genuine") : "") : null],
    [text("blocklist"), event.revocation ? text(event.revocation.list === "vdv-ka" ? "vdvBlocklist"
      : "dtvgBlocklist", event.revocation.version, event.revocation.lockMode) : null],
  ];
  $("facts").hidden = definitionList($("facts"), rows) === 0;

  const details = (Array.isArray(event.details) ? event.details : [])
    .map((detail) => [fieldLabel(detail.label), detail.value]);
  $("all-fields").hidden = definitionList($("all-fields-list"), details) === 0;

  // Which keys were looked at and why each did or did not count (why "unknown key", "invalid signature").
  const keys = $("keys-list");
  keys.replaceChildren();
  for (const key of Array.isArray(event.keys) ? event.keys : []) {
    const item = document.createElement("li");
    item.append(key.issuer + "/" + key.keyId + " \u2014 "
      + term("keyOutcomes", key.outcome, String(key.outcome).replace(/-/g, " ")) + ": ",
      englishSpan(key.reason), " (" + key.listing + ")");
    keys.append(item);
  }
  $("keys").hidden = keys.childElementCount === 0;
  $("keys").open = event.verdict === "unknown-key" || event.verdict === "invalid-signature";

  const layout = Array.isArray(event.layout) ? event.layout : [];
  $("layout-grid").textContent = layout.join("\n");
  $("layout").hidden = layout.length === 0;

  // Records present but unreadable are listed, never dropped: the inspector sees what the ticket holds.
  const unreadable = $("unreadable");
  unreadable.replaceChildren();
  const records = Array.isArray(event.unreadableRecords) ? event.unreadableRecords : [];
  for (const record of records) {
    const item = document.createElement("li");
    const where = document.createElement("strong");
    where.textContent = text("unreadable", record.location);
    item.append(where, " \u2014 ", englishSpan(record.reason));
    unreadable.append(item);
  }
  unreadable.hidden = records.length === 0;

  const warnings = $("warnings");
  warnings.replaceChildren();
  const messages = (event.warningMessages && event.warningMessages.length ? event.warningMessages
    : event.warnings) || [];
  const explanations = Array.isArray(event.warningExplanations) ? event.warningExplanations : [];
  messages.forEach((message, index) => {
    const item = document.createElement("li");
    item.append(...say(explanations[index], message));
    warnings.append(item);
  });
  warnings.hidden = messages.length === 0;

  const meta = [event.device ? text("scanner", event.device) : null, when(event.inspectedAt),
    event.inspector ? text("inspectorShort", event.inspector) : null,
    event.decidedBy === "online" ? text("decidedOnline") : null];
  show($("meta"), meta.filter(Boolean).join(" \u00B7 "));

  if (event.verdict === "clock-untrusted") {
    showClockWarning(event.inspectedAt, event.clockFloor);
  } else if (!$("clock-warning").hidden) {
    // Judged again: the clock may have been put right.
    refreshHealth();
  }
}

let lastSession = null;
function renderSession(session) {
  lastSession = session;
  show($("inspector"), session
    ? text("inspectorNamed", session.name ? session.name + " (" + session.staffID + ")" : session.staffID)
    : text("noInspector"));
  $("inspector").hidden = false;
  $("logout").hidden = !session;
  $("login").hidden = !loginRequired || Boolean(session);
}

let linkState = "connecting";
function setLink(state) {
  linkState = state;
  const link = $("link");
  link.dataset.state = state === "live" ? "live" : state === "connecting" ? "connecting" : "down";
  link.textContent = text({ live: "live", connecting: "connecting", reconnecting: "reconnecting",
    loggedOut: "logInToSee", silent: "daemonSilent" }[state]);
}

let lastHealth = null;
async function refreshHealth() {
  try {
    const response = await fetch("/healthz", { cache: "no-store" });
    renderHealth(await response.json());
  } catch (error) {
    lastHealth = null;
    $("trust").textContent = text("trustNoAnswer");
  }
}

function renderHealth(report) {
  lastHealth = report;
  const trust = $("trust");
  const updated = report.trustUpdatedAt || report.lastSyncAt;
  const sync = report.lastSyncAt ? " \u00B7 " + text("lastSync", age(report.lastSyncAt)) : "";
  // A stand-alone gate's publishers it follows itself: one out of date is said beside the data's age.
  const staleSources = (report.trustSources || []).filter((source) => source.stale)
    .map((source) => " \u00B7 " + text("trustSourceStale", source.name)).join("");
  trust.textContent = (updated ? text("trustUpdated", age(updated)) + sync : text("trustUnknown")) + staleSources;
  trust.dataset.stale = String(!updated || Date.now() - new Date(updated).getTime() > 86400000
    || staleSources !== "");
  const down = (report.scanners || []).filter((scanner) => !scanner.connected)
    .map((scanner) => scanner.name + ": "
      + term("scannerProblems", scanner.problem, scanner.reason || text("notConnected")));
  if (report.lastError) down.push(report.lastError);
  // A sync failure by its kind in the page's language (the daemon's English sentence stays in /healthz).
  if (report.lastSyncError) {
    down.push(text("syncFailed", term("syncProblems", report.lastSyncProblem, report.lastSyncError)));
  }
  const clock = report.clock;
  if (clock && clock.trusted === false) down.push(text("clockUntrusted"));
  if (clock && clock.trusted === false) {
    showClockWarning(clock.wallClock, clock.floor);
  } else {
    showClockWarning(null);
  }
  show($("health"), report.status === "ok" ? null : "\u00B7 " + text("degraded", down.join("; ")));
}

// The verdict panel as before the first scan: what the last session saw is not left on the screen.
function clearVerdict() {
  lastEvent = null;
  const panel = $("verdict");
  panel.dataset.state = "waiting";
  delete panel.dataset.verdict;
  show($("verdict-word"), text("waiting"));
  for (const id of ["verdict-reason", "meta", "action"]) show($(id), null);
  for (const id of ["facts", "layout", "all-fields", "keys", "warnings", "unreadable", "holder-check"]) {
    $(id).hidden = true;
  }
  for (const id of ["facts", "holder-fields", "all-fields-list", "keys-list", "warnings", "unreadable"]) {
    $(id).replaceChildren();
  }
  $("layout-grid").textContent = "";
}

// Everything on the page said again in `chosen`: the switch, kept for the next visit on this device.
function setLanguage(chosen) {
  if (!languages.includes(chosen)) return;
  language = chosen;
  try { localStorage.setItem(storedLanguage, chosen); } catch (error) { /* storage may be off */ }
  translateDocument();
  renderSession(lastSession);
  setLink(linkState);
  if (lastEvent) renderVerdict(lastEvent); else show($("verdict-word"), text("waiting"));
  if (lastHealth) renderHealth(lastHealth);
  else if (clockShown) showClockWarning(clockShown.wallClock, clockShown.floor);
}

// The switch: every language the page has a catalog for, by its own name, in its own language.
$("languages").replaceChildren(...languages.map((tag) => {
  const option = document.createElement("option");
  option.value = tag;
  option.lang = tag;
  option.textContent = (catalogs[tag].about || {}).name || tag;
  return option;
}));
$("languages").value = language;
$("languages").addEventListener("change", () => setLanguage($("languages").value));

// The event stream. In inspector mode it answers only to a logged-in session (the HttpOnly cookie the
// login set, which the browser sends by itself), and ends when the session does.
let source = null;

function openStream() {
  if (source) return;
  source = new EventSource("/events");
  source.addEventListener("open", () => setLink("live"));
  source.addEventListener("error", () => {
    setLink("reconnecting");
    // Refused (no session any more, e.g. after a restart): the browser gives up; ask who we are.
    if (source && source.readyState === EventSource.CLOSED) {
      source = null;
      setTimeout(checkSession, 2000);
    }
  });
  source.addEventListener("verdict", (message) => renderVerdict(JSON.parse(message.data)));
  source.addEventListener("session", (message) => {
    const session = JSON.parse(message.data);
    renderSession(session);
    if (!session && loginRequired) closeStream();
  });
}

function closeStream() {
  if (source) source.close();
  source = null;
  clearVerdict();
  setLink("loggedOut");
}

async function checkSession() {
  if (!loginRequired) { openStream(); return; }
  try {
    const response = await fetch("/session", { cache: "no-store" });
    if (response.ok) {
      renderSession(await response.json());
      openStream();
    } else {
      renderSession(null);
      closeStream();
    }
  } catch (error) {
    setLink("silent");
    setTimeout(checkSession, 5000);
  }
}

$("login-form").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  const form = submit.target;
  const body = JSON.stringify({ staffID: form.staffID.value.trim(), pin: form.pin.value });
  form.pin.value = "";
  try {
    const response = await fetch("/login", {
      method: "POST", headers: { "Content-Type": "application/json" }, body,
    });
    const answer = await response.json();
    if (response.ok) {
      show($("login-error"), null);
      renderSession(answer);
      openStream();
    } else {
      // Locked after too many failures: how long, in the page's language (the server's sentence is English).
      const retryAfter = Number(response.headers.get("Retry-After"));
      show($("login-error"), response.status === 429 && retryAfter > 0 ? text("loginLocked", duration(retryAfter))
        : term("loginErrors", answer.error, answer.error) || text("loginRefused"));
    }
  } catch (error) {
    show($("login-error"), text("daemonSilent"));
  }
});

$("logout").addEventListener("click", async () => {
  await fetch("/logout", { method: "POST" }).catch(() => {});
  renderSession(null);
  if (loginRequired) closeStream();
});

translateDocument();
show($("verdict-word"), text("waiting"));
setLink("connecting");
renderSession(null);
checkSession();
refreshHealth();
setInterval(refreshHealth, 30000);
