// The site's own behaviour (written by `lessons site`): the course menu's button on a narrow screen,
// and each answer toggle's label following its state (显示答案 when closed, 隐藏答案 when open).
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
    details.addEventListener("toggle", function () { summary.textContent = details.open ? opened : closed; });
  });
})();
