#pragma once

#include <QString>

namespace rankscope {

// The id rule of the knowledge base (node ids, fix-pattern ids): lower-case, `&` becomes
// " and ", every run of other non-alphanumeric characters becomes one `-`, leading and trailing
// `-` are trimmed. "package build & import" -> "package-build-and-import". The ids are the CLI's
// public contract, so the rule must never depend on anything but the text.
QString slugify(QStringView text);

} // namespace rankscope
