/* The copy button of every code block: it copies code, not a transcript.
 *
 * - A ">>>" example: its statements without the prompts and without the output (the
 *   doctest rule: ">>> " starts a statement, "... " or a bare "..." right after it
 *   continues it, any other line is output). A statement of several lines is followed by
 *   an empty line, which ends an indented block in the interactive interpreter.
 * - A console block (one with "$ " lines): its commands without "$ ", each with the lines
 *   a trailing backslash continues, and without their output.
 * - Any other block: as it is.
 *
 * tests/test_site.py clicks every button in Chromium and runs what was copied.
 */
"use strict";

function statements(lines) {
  const code = [];
  let statement = null; // the lines of the statement being read; null while in output
  const end = () => {
    if (statement === null) return;
    while (statement.length > 1 && statement[statement.length - 1] === "") statement.pop();
    code.push(...statement, ...(statement.length > 1 ? [""] : []));
    statement = null;
  };
  for (const line of lines) {
    if (line === ">>>" || line.startsWith(">>> ")) {
      end();
      statement = [line.slice(4)];
    } else if (statement !== null && (line === "..." || line.startsWith("... "))) {
      statement.push(line.slice(4));
    } else {
      end();
    }
  }
  end();
  return code;
}

function commands(lines) {
  const code = [];
  let continued = false;
  for (const line of lines) {
    const command = continued ? line : line.startsWith("$ ") ? line.slice(2) : null;
    if (command !== null) code.push(command);
    continued = command !== null && line.endsWith("\\");
  }
  return code;
}

function codeOf(shown) {
  const lines = shown.replace(/\n+$/, "").split("\n");
  if (shown.trimStart().startsWith(">>>")) return statements(lines).join("\n").trimEnd();
  if (lines.some((line) => line.startsWith("$ "))) return commands(lines).join("\n");
  return lines.join("\n");
}

function writeClipboard(text) {
  if (navigator.clipboard) return navigator.clipboard.writeText(text);
  // Pages served over plain http from another host have no navigator.clipboard.
  const area = document.createElement("textarea");
  area.value = text;
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  return copied ? Promise.resolve() : Promise.reject(new Error("copy refused"));
}

function addCopyButton(pre) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy-code";
  button.textContent = "Copy";
  button.title = "Copy the code (without prompts and output)";
  button.addEventListener("click", () => {
    const said = (word) => {
      button.textContent = word;
      setTimeout(() => (button.textContent = "Copy"), 1500);
    };
    writeClipboard(codeOf(pre.textContent)).then(() => said("Copied"), () => said("Failed"));
  });
  pre.parentElement.append(button);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("div.highlight > pre").forEach(addCopyButton);
});
