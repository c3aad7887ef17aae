// Injected by `cargo xtask book browser-check` into a scratch copy of the built book,
// one page at a time in headless Chromium. Once the page has loaded and its mermaid
// diagrams have rendered (or 5 s of the page's time have passed), it appends
// <pre id="xtask-browser-check">[problems as JSON]</pre> to the body, which the tool
// reads from Chromium's --dump-dom output. Console messages reach the tool through
// Chromium's log, so this script does not hook the console.
(() => {
    const problems = [];
    const short = (text) => text.trim().replace(/\s+/g, ' ').slice(0, 80);

    // The language button must lead to this page in the other edition: the English
    // edition is the book's root, the Chinese one its zh-CN/ folder.
    function inspectLanguageButton() {
        const link = document.querySelector('.right-buttons a.language-picker');
        if (!link) {
            problems.push('no language button in the menu bar');
            return;
        }
        const chinese = document.documentElement.lang === 'zh-CN';
        const editionRoot = new URL(path_to_root || './', window.location.href).href;
        const page = window.location.href.slice(editionRoot.length) || 'index.html';
        const expected = chinese
            ? new URL('../' + page, editionRoot).href
            : new URL('zh-CN/' + page, editionRoot).href;
        if (link.href !== expected) {
            problems.push(`the language button leads to ${link.href}, not ${expected}`);
        }
    }

    function inspect() {
        inspectLanguageButton();
        const main = document.querySelector('main');
        if (!main) {
            problems.push('the page has no <main> element');
            return;
        }
        const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (node.parentElement.closest('pre, code, script, style')) {
                continue;
            }
            const text = node.nodeValue;
            if (text.includes('{{#')) {
                problems.push('a raw mdBook directive in the text: ' + short(text));
            }
            if (text.includes('**') || /[\u4e00-\u9fff]_|_[\u4e00-\u9fff]/.test(text)) {
                problems.push('an emphasis marker left as text (`**`, or `_` next to '
                    + 'a CJK character): ' + short(text));
            }
            if (text.includes('```')) {
                problems.push('a fence marker in the text (a listing broke out of its fence): '
                    + short(text));
            }
        }
        for (const code of main.querySelectorAll('pre > code')) {
            const text = code.textContent;
            const first = short(text.split('\n').find((line) => line.trim()) || '');
            if (text.includes('{{#')) {
                problems.push('a raw mdBook directive in a listing: ' + first);
            }
            if (code.classList.contains('mermaid')) {
                problems.push('a mermaid diagram left as code: ' + first);
            }
            const pre = code.parentElement;
            const overflow = Math.max(code.scrollWidth - code.clientWidth,
                pre.scrollWidth - pre.clientWidth);
            if (overflow > 1) {
                problems.push(`a listing ${overflow} px wider than the page: ${first}`);
            }
        }
        for (const diagram of main.querySelectorAll('pre.mermaid')) {
            const svg = diagram.querySelector('svg');
            if (!svg) {
                problems.push('a mermaid diagram that did not render: '
                    + short(diagram.textContent));
            } else if (/syntax error/i.test(svg.textContent)) {
                problems.push('a mermaid diagram with a syntax error: '
                    + short(svg.textContent));
            }
        }
    }

    function report() {
        inspect();
        const out = document.createElement('pre');
        out.id = 'xtask-browser-check';
        out.textContent = JSON.stringify(problems);
        document.body.appendChild(out);
    }

    const rendered = () => [...document.querySelectorAll('pre.mermaid')]
        .every((diagram) => diagram.querySelector('svg'));
    let waited = 0;
    function wait() {
        if (rendered() || waited >= 5000) {
            report();
        } else {
            waited += 50;
            setTimeout(wait, 50);
        }
    }
    if (document.readyState === 'complete') {
        wait();
    } else {
        window.addEventListener('load', wait);
    }
})();
