// Package browser holds the web console's browser tests: the whole service,
// as serve wires it, driven by a real headless Chromium through the Chrome
// DevTools Protocol. They run when LICENTIA_TEST_CHROMIUM names the browser
// (`.ci/run` installs Debian's chromium and sets it) and save a screenshot
// of every page they visit under screenshots/.
package browser
