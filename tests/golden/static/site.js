// Copy buttons for code blocks. The page reads fine without this file.
(function () {
  "use strict";
  function addCopy(pre) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy this command");
    button.addEventListener("click", function () {
      var text = pre.querySelector("code").innerText;
      var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () {});
      }
    });
    pre.appendChild(button);
  }
  document.querySelectorAll(".cmd pre").forEach(addCopy);
})();
