// The language button in the menu bar: it links each page of the English edition
// (the book's root) to the same page of the Chinese edition (under zh-CN/), and
// back. mdBook sets `path_to_root` on every page and `lang` on <html>.
(() => {
    const translated = 'zh-CN';
    const inChinese = document.documentElement.lang === translated;
    // path_to_root is "" on a top-level page and "../" for each level below it, so
    // the page's path within its edition is the last depth + 1 segments of the URL.
    const depth = (path_to_root.match(/\.\.\//g) || []).length;
    const segments = window.location.pathname.split('/');
    let page = segments.slice(-(depth + 1)).join('/');
    if (page === '' || page.endsWith('/')) {
        page += 'index.html';
    }
    const link = document.createElement('a');
    link.className = 'language-picker';
    link.href = inChinese
        ? path_to_root + '../' + page
        : path_to_root + translated + '/' + page;
    link.hreflang = inChinese ? 'en' : translated;
    link.lang = link.hreflang;
    link.textContent = inChinese ? 'English' : '中文';
    link.title = inChinese ? 'Read this page in English' : '阅读本页的中文版';
    link.setAttribute('aria-label', link.title);
    link.style.fontSize = '1.4rem';
    link.style.fontWeight = 'bold';
    link.style.textDecoration = 'none';
    link.style.marginInlineEnd = '10px';
    const buttons = document.querySelector('.right-buttons');
    if (buttons) {
        buttons.prepend(link);
    }
})();
