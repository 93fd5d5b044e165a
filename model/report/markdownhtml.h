#pragma once

#include <QString>

namespace rankscope {

// Renders the Markdown RankScope itself writes (ATX headings, "- " lists, pipe tables, fenced
// code, paragraphs; inline `code`, **bold**, ![alt](src) images and backslash escapes) as HTML,
// so the HTML report says exactly what the Markdown one does. Not a general CommonMark renderer.
class MarkdownHtml {
public:
    static QString render(const QString& markdown);
    static QString inlineHtml(const QString& text);
};

} // namespace rankscope
