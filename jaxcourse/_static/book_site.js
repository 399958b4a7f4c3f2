// Long lines of code and output wrap (book_site.css); this gives each wrapped line a hanging
// indent, so the continuation of a line of a call trace or of an indented block starts to the
// right of where the line itself starts, and the tree stays readable on a narrow screen.
//
// Each line of a <pre> is wrapped in a span.jc-line (an inline-block as wide as the <pre>),
// the newlines between lines stay text nodes: what a reader selects or copies is unchanged.
// Pygments' and ANSI output's token spans are flat, so a token that spans lines is split into
// one copy per line.
(function () {
  "use strict";
  // How far right of its own start a wrapped line continues, in characters.
  const HANG = 4;

  function hangingLines(pre) {
    const lines = [[]];
    for (const node of Array.from(pre.childNodes)) {
      const pieces = node.textContent.split("\n");
      pieces.forEach((piece, i) => {
        if (i > 0) lines.push([]);
        if (piece === "") return;
        if (node.nodeType === Node.ELEMENT_NODE) {
          const copy = node.cloneNode(pieces.length === 1);
          if (pieces.length > 1) copy.textContent = piece;
          lines[lines.length - 1].push(copy);
        } else {
          lines[lines.length - 1].push(document.createTextNode(piece));
        }
      });
    }
    const result = document.createDocumentFragment();
    lines.forEach((parts, i) => {
      if (i > 0) result.appendChild(document.createTextNode("\n"));
      if (parts.length === 0) return;
      const line = document.createElement("span");
      line.className = "jc-line";
      const text = parts.map((p) => p.textContent).join("");
      const indent = text.length - text.trimStart().length;
      line.style.setProperty("--jc-hang", `${indent + HANG}ch`);
      parts.forEach((p) => line.appendChild(p));
      result.appendChild(line);
    });
    pre.replaceChildren(result);
    pre.classList.add("jc-hanging");
  }

  function run() {
    for (const pre of document.querySelectorAll("article div.highlight > pre")) {
      if (!pre.classList.contains("jc-hanging")) hangingLines(pre);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
