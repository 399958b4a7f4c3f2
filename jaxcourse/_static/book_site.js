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

  // Where a long line may break besides spaces: after "(", "{" or a comma, so that a
  // call wraps between its arguments (a <wbr> adds no text to what is copied).
  const BREAK_AFTER = /(?<=[({,])/;

  function withBreaks(parts, text, makeNode) {
    for (const segment of text.split(BREAK_AFTER)) {
      parts.push(makeNode(segment));
      if (/[({,]$/.test(segment)) {
        parts.push(document.createElement("wbr"));
      }
    }
  }

  function hangingLines(pre) {
    const lines = [[]];
    for (const node of Array.from(pre.childNodes)) {
      const pieces = node.textContent.split("\n");
      pieces.forEach((piece, i) => {
        if (i > 0) lines.push([]);
        if (piece === "") return;
        const parts = lines[lines.length - 1];
        if (node.nodeType === Node.ELEMENT_NODE) {
          withBreaks(parts, piece, (segment) => {
            const copy = node.cloneNode(false);
            copy.textContent = segment;
            return copy;
          });
        } else {
          withBreaks(parts, piece, (segment) => document.createTextNode(segment));
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
