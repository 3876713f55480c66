// The dashboard's live view: every 2 s it asks the server for the
// fingerprint of the state files (/api/version) and, when it changed,
// fetches the page again and puts its <main> in place of this one. The
// page is whole without it: this script only saves a reload.
(function () {
  "use strict";
  var body = document.body;
  var url = body && body.getAttribute("data-version-url");
  if (!url || !window.fetch || !window.DOMParser) {
    return;
  }
  var version = body.getAttribute("data-version") || "";
  var period = 2000;

  function replaceMain(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var next = doc.querySelector("main");
    var cur = document.querySelector("main");
    if (!next || !cur) {
      return "";
    }
    cur.replaceWith(document.importNode(next, true));
    var title = doc.querySelector("title");
    if (title) {
      document.title = title.textContent;
    }
    return (doc.body && doc.body.getAttribute("data-version")) || "";
  }

  function poll() {
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (doc) {
        if (!doc || typeof doc.version !== "string" || doc.version === version) {
          return null;
        }
        var seen = doc.version;
        return fetch(window.location.href, { cache: "no-store", credentials: "same-origin" })
          .then(function (r) { return r.text(); })
          .then(function (html) {
            // The page's own reading is taken before it reads the files,
            // so a change made meanwhile is seen at the next tick.
            version = replaceMain(html) || seen;
            body.setAttribute("data-live-updated", new Date().toISOString());
          });
      })
      .catch(function () { /* the server is away: try again at the next tick */ })
      .then(function () { window.setTimeout(poll, period); });
  }
  window.setTimeout(poll, period);
})();
