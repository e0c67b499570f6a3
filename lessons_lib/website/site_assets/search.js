// Client-side search over window.COURSE_SEARCH (written by `lessons site`): every section's heading and prose.
// Plain substring matching, so a Chinese word is found without a word segmenter; several words
// separated by spaces must all occur. Sections whose heading holds a word rank first.
(function () {
  "use strict";
  var index = window.COURSE_SEARCH;
  var input = document.getElementById("search-input");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var LIMIT = 50;

  function normal(text) { return text.normalize("NFKC").toLowerCase(); }
  function count(haystack, needle) {
    var n = 0, at = haystack.indexOf(needle);
    while (at !== -1) { n += 1; at = haystack.indexOf(needle, at + needle.length); }
    return n;
  }
  function escapeHtml(text) {
    return text.replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function snippet(text, words) {
    var lower = normal(text), at = lower.indexOf(words[0]);
    var start = Math.max(0, at - 40), piece = text.slice(start, start + 160);
    var out = escapeHtml(piece);
    words.forEach(function (w) {
      var pattern = new RegExp(escapeHtml(w).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
      out = out.replace(pattern, function (m) { return "<mark>" + m + "</mark>"; });
    });
    return (start > 0 ? "…" : "") + out + (start + 160 < text.length ? "…" : "");
  }
  function search(query) {
    var words = normal(query).split(/\s+/).filter(Boolean);
    if (!words.length) { return []; }
    var hits = [];
    index.sections.forEach(function (s) {
      var heading = normal(s.h), body = normal(s.t), score = 0;
      for (var i = 0; i < words.length; i += 1) {
        var inHeading = count(heading, words[i]), inBody = count(body, words[i]);
        if (!inHeading && !inBody) { return; }
        score += 10 * inHeading + inBody;
      }
      hits.push({section: s, score: score, words: words});
    });
    hits.sort(function (a, b) { return b.score - a.score || a.section.p - b.section.p; });
    return hits;
  }
  function show(query) {
    list.innerHTML = "";
    var hits = search(query);
    if (!query.trim()) { return; }
    status.textContent = hits.length ? "“" + query + "”：找到 " + hits.length + " 节" +
      (hits.length > LIMIT ? "，下面是前 " + LIMIT + " 节" : "") : "“" + query + "”：没有找到";
    hits.slice(0, LIMIT).forEach(function (hit) {
      var s = hit.section, page = index.pages[s.p];
      var li = document.createElement("li");
      var href = page.u + (s.a ? "#" + encodeURIComponent(s.a) : "");
      var where = page.t + (s.h && s.h !== page.t ? " › " + s.h : "");
      li.innerHTML = '<a class="where" href="' + escapeHtml(href) + '">' + escapeHtml(where) + "</a>" +
        '<div class="snippet">' + snippet(s.t || s.h, hit.words) + "</div>";
      list.appendChild(li);
    });
  }
  var query = new URLSearchParams(window.location.search).get("q") || "";
  input.value = query;
  show(query);
})();
