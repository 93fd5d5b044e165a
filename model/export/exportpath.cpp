#include "model/export/exportpath.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace rankscope::ExportPath {

namespace {

// The canonical form of `path`, which may not exist yet: its nearest existing ancestor resolved
// (links and all), the missing tail appended.
QString resolved(const QString& path)
{
    QFileInfo info(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    QString tail;
    while (!info.exists() && !info.isSymLink()) {
        const QString parent = info.absolutePath();
        if (parent == info.absoluteFilePath()) return info.absoluteFilePath();
        tail = QLatin1Char('/') + info.fileName() + tail;
        info = QFileInfo(parent);
    }
    const QString canonical = info.canonicalFilePath();
    // A dangling link: writing follows it to its target.
    const QString base = canonical.isEmpty() && info.isSymLink()
                             ? resolved(info.symLinkTarget())
                             : (canonical.isEmpty() ? info.absoluteFilePath() : canonical);
    return QDir::cleanPath(base + tail);
}

} // namespace

QString defaultDirectory()
{
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QFileInfo(documents).isDir()) return documents;
    return QDir::homePath();
}

QString defaultPath(const QString& fileName)
{
    return QDir(defaultDirectory()).filePath(fileName);
}

QString refusal(const QString& path, const QString& openedFolder)
{
    if (openedFolder.isEmpty()) return {};
    const QString folder = resolved(openedFolder);
    const QString target = resolved(path);
    const QString prefix = folder.endsWith(QLatin1Char('/')) ? folder : folder + QLatin1Char('/');
    if (target != folder && !target.startsWith(prefix)) return {};
    return QStringLiteral("%1 is inside the opened folder %2; RankScope never writes there (the "
                          "next load would read the export as one of the job's files): choose "
                          "another folder")
        .arg(QDir::toNativeSeparators(path), QDir::toNativeSeparators(openedFolder));
}

} // namespace rankscope::ExportPath
