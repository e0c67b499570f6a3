// The site's own behaviour (written by `lessons site`): the course menu's button on a narrow screen,
// each answer toggle's label following its state (显示答案 when closed, 隐藏答案 when open), and the
// notes on wide printed tables and shrunk figures.
(function () {
  "use strict";
  var button = document.querySelector(".menu-button");
  if (button) {
    button.addEventListener("click", function () {
      var open = document.body.classList.toggle("menu-open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }
  document.querySelectorAll("details.answer").forEach(function (details) {
    var summary = details.querySelector("summary");
    var closed = summary.textContent, opened = closed.replace("显示", "隐藏");
    details.addEventListener("toggle", function () {
      summary.textContent = details.open ? opened : closed;
      markWide();  // the tables and figures inside were not laid out while the answer was closed
    });
  });

  // A printed table wider than its box gets a note above it (on a phone only its first columns show
  // at first), and a figure drawn smaller than it is says that a tap opens it full size.
  function markWide() {
    document.querySelectorAll("pre.output .output-table").forEach(function (table) {
      var wide = table.scrollWidth > table.clientWidth + 1;
      var note = table.previousElementSibling;
      var noted = note !== null && note.classList.contains("table-note");
      if (wide && !noted) {
        note = document.createElement("span");
        note.className = "table-note";
        note.textContent = "表格较宽：在表上左右滑动，查看其余各列 →";
        table.parentNode.insertBefore(note, table);
      } else if (!wide && noted) {
        note.remove();
      }
    });
    document.querySelectorAll("a.figure-link img").forEach(function (image) {
      var shrunk = image.complete && image.clientWidth > 0 && image.clientWidth < 0.9 * image.naturalWidth;
      image.parentNode.classList.toggle("shrunk", shrunk);
    });
  }
  markWide();
  window.addEventListener("load", markWide);
  window.addEventListener("resize", markWide);
})();
