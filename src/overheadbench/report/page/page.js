// overheadbench's page: zoom, search and keyboard use for the flame graphs. Everything the page
// says is in the HTML already; this only adds interaction, and loads nothing.
"use strict";
(function () {
  var WIDTH = 1000, CHAR = 6.5;

  function label(frame, width) {
    var name = frame.getAttribute("data-name"), fits = Math.floor((width - 6) / CHAR);
    if (name.length <= fits) return name;
    return fits > 3 ? name.slice(0, fits - 1) + "\u2026" : "";
  }

  function zoom(svg, target) {
    var x0 = target ? parseFloat(target.getAttribute("data-x")) : 0;
    var w0 = target ? parseFloat(target.getAttribute("data-w")) : 1;
    var depth = target ? parseInt(target.getAttribute("data-depth"), 10) : 0;
    svg.querySelectorAll(".frame").forEach(function (frame) {
      var x = parseFloat(frame.getAttribute("data-x")), w = parseFloat(frame.getAttribute("data-w"));
      var d = parseInt(frame.getAttribute("data-depth"), 10);
      var inside = x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;
      var above = d < depth && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;
      var rect = frame.querySelector("rect"), text = frame.querySelector("text");
      if (!(inside || above)) { frame.classList.add("hidden"); return; }
      frame.classList.remove("hidden");
      var left = above ? 0 : (x - x0) / w0 * WIDTH, width = above ? WIDTH : w / w0 * WIDTH;
      rect.setAttribute("x", left.toFixed(1));
      rect.setAttribute("width", width.toFixed(1));
      text.setAttribute("x", (left + 3).toFixed(1));
      text.textContent = label(frame, width);
    });
    svg.setAttribute("data-zoomed", target ? target.getAttribute("data-name") : "");
  }

  function search(box, svg, words) {
    var found = 0, matched = 0;
    svg.querySelectorAll(".frame").forEach(function (frame) {
      var hit = words !== "" && frame.getAttribute("data-name").toLowerCase().indexOf(words) >= 0;
      frame.classList.toggle("match", hit);
      if (hit) {
        found += 1;
        matched = Math.max(matched, parseFloat(frame.getAttribute("data-w")));
      }
    });
    box.querySelector(".flame-found").textContent =
      words === "" ? "" : found + " frames, the widest " + Math.round(matched * 100) + "% of the total";
  }

  document.querySelectorAll(".flame-box").forEach(function (box) {
    var svg = box.querySelector("svg.flame"), tools = box.querySelector(".flame-tools");
    if (!svg) return;
    tools.hidden = false;
    svg.addEventListener("click", function (event) {
      var frame = event.target.closest(".frame");
      if (frame) zoom(svg, frame.getAttribute("data-depth") === "0" ? null : frame);
    });
    svg.addEventListener("keydown", function (event) {
      var frame = event.target.closest(".frame");
      if (!frame) return;
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        zoom(svg, frame.getAttribute("data-depth") === "0" ? null : frame);
      } else if (event.key === "Escape") {
        zoom(svg, null);
      }
    });
    tools.querySelector(".flame-reset").addEventListener("click", function () { zoom(svg, null); });
    tools.querySelector(".flame-search").addEventListener("input", function (event) {
      search(box, svg, event.target.value.trim().toLowerCase());
    });
  });
})();
