"use strict";
const $ = (id) => document.getElementById(id);
const loginRequired = document.body.dataset.loginRequired === "true";

function show(element, value) {
  const empty = value === null || value === undefined || value === "";
  element.textContent = empty ? "" : String(value);
  element.hidden = empty;
}

function when(iso) {
  if (!iso) return null;
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function age(iso) {
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 90) return Math.round(seconds) + " s ago";
  if (seconds < 5400) return Math.round(seconds / 60) + " min ago";
  if (seconds < 172800) return Math.round(seconds / 3600) + " h ago";
  return Math.round(seconds / 86400) + " days ago";
}

// A ticket id that is text (a UIC ticket key, a PNR) as its text; binary ids stay hex.
function ticketText(hex) {
  if (!hex || hex.length % 2) return hex;
  const bytes = hex.match(/../g).map((pair) => parseInt(pair, 16));
  return bytes.every((byte) => byte >= 0x20 && byte < 0x7f) ? String.fromCharCode(...bytes) : hex;
}

// The device clock behind the trusted-time floor: said above everything, until the clock is put right.
// Short, because the verdict's reason below says it in full.
function showClockWarning(wallClock, floor) {
  show($("clock-warning"), wallClock ? "Device clock wrong: it reads " + when(wallClock)
    + (floor ? ", but it is at least " + when(floor) : "")
    + ". Set the clock (NTP) \u2014 validity cannot be judged." : null);
}
const actionText = {
  "refuse": "Refuse the ticket.",
  "keep-ticket": "Keep the ticket: it is to be confiscated.",
  "check-id": "Check the passenger's ID: the ticket is suspicious.",
};

function renderVerdict(event) {
  const panel = $("verdict");
  panel.dataset.state = event.verdict === "valid" ? "valid"
    : event.verdict === "clock-untrusted" ? "doubt" : "invalid";
  panel.dataset.verdict = event.verdict;
  show($("verdict-word"), String(event.verdict).replace(/-/g, " "));
  show($("verdict-reason"), event.reason);
  // A ticket on a published blocklist: what to do, first and large (keep it, check the ID, refuse it).
  const revocation = event.revocation;
  const action = $("action");
  show(action, revocation ? actionText[revocation.action] || actionText.refuse : null);
  action.dataset.action = revocation ? revocation.action : "";
  show($("holder-check"), event.holder ? "Check ID \u2014 holder: " + event.holder : null);

  const validity = [when(event.validFrom), when(event.validUntil)];
  const documents = Array.isArray(event.documents) ? event.documents : [];
  const rows = [
    ["Product", event.product],
    ...documents.map((document, index) => [
      documents.length > 1 ? "Document " + (index + 1) : "Document",
      // "openTicket" → "Open ticket"; the product is on its own row already.
      (document.kind.charAt(0).toUpperCase() + document.kind.slice(1).replace(/[A-Z]/g,
        (letter) => " " + letter.toLowerCase()))
        + ": " + (event.product && document.summary.startsWith(event.product + ", ")
          ? document.summary.slice(event.product.length + 2) : document.summary)
        + (documents.length > 1 && (document.validFrom || document.validUntil)
          ? " (" + (when(document.validFrom) || "\u2026") + " \u2013 " + (when(document.validUntil) || "\u2026")
            + ")" : "")]),
    ["Valid", validity[0] || validity[1]
      ? (validity[0] || "\u2026") + " \u2013 " + (validity[1] || "\u2026") : null],
    ["Category", [event.category, event.passengers ? event.passengers + " passenger"
      + (event.passengers === 1 ? "" : "s") : null].filter(Boolean).join(", ")],
    ["Zones", Array.isArray(event.zones) ? event.zones.join(", ") : null],
    ["Issuer", event.issuer],
    ["Ticket", ticketText(event.ticketId)],
    // Validity cannot be judged, but whether the ticket is genuine can.
    ["Signature", event.verdict === "clock-untrusted" ? event.signature
      + (event.signature === "valid" ? " (the ticket is genuine)" : "") : null],
    ["Blocklist", event.revocation ? (event.revocation.list === "vdv-ka" ? "VDV-KA blocklist"
      : "DTVG UIC blocklist") + ", version " + event.revocation.version + ", lock mode "
      + event.revocation.lockMode : null],
  ];
  const facts = $("facts");
  facts.replaceChildren();
  for (const [label, value] of rows) {
    if (value === null || value === undefined || value === "") continue;
    const term = document.createElement("dt");
    term.textContent = label;
    const detail = document.createElement("dd");
    detail.textContent = String(value);
    facts.append(term, detail);
  }
  facts.hidden = facts.childElementCount === 0;

  const allFields = $("all-fields-list");
  allFields.replaceChildren();
  for (const detail of Array.isArray(event.details) ? event.details : []) {
    const term = document.createElement("dt");
    term.textContent = detail.label;
    const value = document.createElement("dd");
    value.textContent = detail.value;
    allFields.append(term, value);
  }
  $("all-fields").hidden = allFields.childElementCount === 0;

  // Which keys were looked at and why each did or did not count (why "unknown key", "invalid signature").
  const keys = $("keys-list");
  keys.replaceChildren();
  for (const key of Array.isArray(event.keys) ? event.keys : []) {
    const item = document.createElement("li");
    item.textContent = key.issuer + "/" + key.keyID + " \u2014 " + String(key.outcome).replace(/-/g, " ")
      + ": " + key.reason + " (" + key.listing + ")";
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
    where.textContent = "Unreadable: " + record.location;
    item.append(where, document.createTextNode(" \u2014 " + record.reason));
    unreadable.append(item);
  }
  unreadable.hidden = records.length === 0;

  const warnings = $("warnings");
  warnings.replaceChildren();
  const messages = (event.warningMessages && event.warningMessages.length ? event.warningMessages
    : event.warnings) || [];
  for (const message of messages) {
    const item = document.createElement("li");
    item.textContent = message;
    warnings.append(item);
  }
  warnings.hidden = messages.length === 0;

  const meta = [event.device ? "Scanner " + event.device : null, when(event.inspectedAt),
    event.inspector ? "inspector " + event.inspector : null,
    event.decidedBy === "online" ? "decided online" : null];
  show($("meta"), meta.filter(Boolean).join(" \u00B7 "));

  if (event.verdict === "clock-untrusted") {
    showClockWarning(event.inspectedAt, event.clockFloor);
  } else if (!$("clock-warning").hidden) {
    // Judged again: the clock may have been put right.
    refreshHealth();
  }
}

function renderSession(session) {
  show($("inspector"), session
    ? "Inspector: " + (session.name ? session.name + " (" + session.staffID + ")" : session.staffID)
    : "No inspector logged in");
  $("inspector").hidden = false;
  $("logout").hidden = !session;
  $("login").hidden = !loginRequired || Boolean(session);
}

async function refreshHealth() {
  try {
    const response = await fetch("/healthz", { cache: "no-store" });
    const report = await response.json();
    const trust = $("trust");
    const updated = report.trustUpdatedAt || report.lastSyncAt;
    const sync = report.lastSyncAt ? " \u00B7 last sync " + age(report.lastSyncAt) : "";
    trust.textContent = updated ? "Trust data updated " + age(updated) + sync : "Trust data age unknown";
    trust.dataset.stale = String(!updated || Date.now() - new Date(updated).getTime() > 86400000);
    const down = (report.scanners || []).filter((scanner) => !scanner.connected)
      .map((scanner) => scanner.name + ": " + (scanner.reason || "not connected"));
    if (report.lastError) down.push(report.lastError);
    const clock = report.clock;
    if (clock && clock.trusted === false) down.push("clock untrusted");
    if (clock && clock.trusted === false) {
      showClockWarning(clock.wallClock, clock.floor);
    } else {
      showClockWarning(null);
    }
    show($("health"), report.status === "ok" ? null : "\u00B7 Degraded: " + down.join("; "));
  } catch (error) {
    $("trust").textContent = "Trust data: the daemon does not answer";
  }
}

// The verdict panel as before the first scan: what the last session saw is not left on the screen.
function clearVerdict() {
  const panel = $("verdict");
  panel.dataset.state = "waiting";
  delete panel.dataset.verdict;
  show($("verdict-word"), "Waiting for the first scan");
  for (const id of ["verdict-reason", "holder-check", "meta"]) show($(id), null);
  for (const id of ["facts", "layout", "all-fields", "warnings", "unreadable"]) $(id).hidden = true;
  $("facts").replaceChildren();
  $("all-fields-list").replaceChildren();
  $("warnings").replaceChildren();
  $("unreadable").replaceChildren();
  $("layout-grid").textContent = "";
}

// The event stream. In inspector mode it answers only to a logged-in session (the HttpOnly cookie the
// login set, which the browser sends by itself), and ends when the session does.
const link = $("link");
let source = null;

function openStream() {
  if (source) return;
  source = new EventSource("/events");
  source.addEventListener("open", () => { link.textContent = "Live"; link.dataset.state = "live"; });
  source.addEventListener("error", () => {
    link.textContent = "Reconnecting\u2026";
    link.dataset.state = "down";
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
  link.textContent = "Log in to see verdicts";
  link.dataset.state = "down";
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
    link.textContent = "The daemon does not answer";
    link.dataset.state = "down";
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
      show($("login-error"), answer.error || "Login refused.");
    }
  } catch (error) {
    show($("login-error"), "The daemon does not answer.");
  }
});

$("logout").addEventListener("click", async () => {
  await fetch("/logout", { method: "POST" }).catch(() => {});
  renderSession(null);
  if (loginRequired) closeStream();
});

renderSession(null);
checkSession();
refreshHealth();
setInterval(refreshHealth, 30000);
