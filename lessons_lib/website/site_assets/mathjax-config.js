// MathJax 3's settings, read before assets/mathjax/tex-svg-full.js (a file of the site, not an inline
// script: the pages' Content-Security-Policy runs only the site's own script files).
window.MathJax = {
  tex: {inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]], processEscapes: true},
  options: {ignoreHtmlClass: "tex2jax_ignore", processHtmlClass: "tex2jax_process"},
  svg: {fontCache: "global"}
};
