// Export and import from the app (File menu): the open conversation as
// Markdown or JSON, everything (conversations, the prompt library with its
// versions and labels, generations, ratings, experiments) as JSON, and
// import of such a JSON file (Store::import_json: all or nothing; a prompt
// already here with the same versions is reused, so importing a file twice
// adds no prompt twice). The store work and the file I/O run on the storage
// thread; `done` gets a line for the banner, `failed` the error.
#pragma once

#include <QString>

#include <functional>

class QMenu;
class QObject;
class QWidget;

namespace hearth::app {

class Banner;
class ChatController;
class StorageService;

enum class ExportFormat { kMarkdown, kJson };

using ExportDone = std::function<void(const QString& message)>;

// conversation_id 0: everything (JSON only).
void export_to_file(StorageService* storage, QObject* context, qint64 conversation_id, ExportFormat format,
                    const QString& path, ExportDone done);
void import_from_file(StorageService* storage, QObject* context, const QString& path, ExportDone done);

// The File menu's entries; they ask for a file name, then report on the banner.
void add_export_menu(QMenu* file, QWidget* window, StorageService* storage, ChatController* controller, Banner* banner);

}  // namespace hearth::app
