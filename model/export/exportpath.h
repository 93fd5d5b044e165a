#pragma once

#include <QString>

namespace rankscope {

// Where exports go. Nothing is ever written into the folder being examined: a report or merged
// trace saved there would be read back by the next load as one more log or trace.
namespace ExportPath {

// The user's documents directory (QStandardPaths::DocumentsLocation), or home when there is none.
QString defaultDirectory();
// `fileName` in defaultDirectory().
QString defaultPath(const QString& fileName);
// Empty when `path` may be written while `openedFolder` is open; otherwise the one-line reason
// (the path, after links are resolved, lies in that folder or one of its subfolders).
QString refusal(const QString& path, const QString& openedFolder);

} // namespace ExportPath

} // namespace rankscope
