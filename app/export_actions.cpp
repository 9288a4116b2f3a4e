#include "app/export_actions.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QMenu>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/storage_service.h"

namespace hearth::app {
namespace {

store::StoreResult<void> write_file(const QString& path, const std::string& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) || !file.flush()) {
    return store::make_store_error(store::StoreErrorCode::kIo,
                                   "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
  }
  return {};
}

}  // namespace

void export_to_file(StorageService* storage, QObject* context, qint64 conversation_id, ExportFormat format,
                    const QString& path, ExportDone done) {
  storage->run(
      context, QObject::tr("exporting to %1").arg(path),
      [conversation_id, format, path](store::Store& s) -> store::StoreResult<QString> {
        std::string text;
        if (format == ExportFormat::kMarkdown) {
          STORE_ASSIGN_OR_RETURN(text, s.export_markdown(conversation_id));
        } else {
          store::ExportOptions options;
          if (conversation_id != 0) options.conversation_id = conversation_id;
          STORE_ASSIGN_OR_RETURN(text, s.export_json(options));
        }
        STORE_TRY(write_file(path, text));
        return QObject::tr("Exported to %1.").arg(QDir::toNativeSeparators(path));
      },
      [done](QString message) { done(message); });
}

void import_from_file(StorageService* storage, QObject* context, const QString& path, ExportDone done) {
  storage->write(
      context, QObject::tr("importing %1").arg(path),
      [path](store::Store& s) -> store::StoreResult<QString> {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
          return store::make_store_error(store::StoreErrorCode::kIo,
                                         "cannot read " + path.toStdString() + ": " + file.errorString().toStdString());
        }
        const QByteArray bytes = file.readAll();
        STORE_ASSIGN_OR_RETURN(
            const store::ImportSummary r,
            s.import_json(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size()))));
        QString message = QObject::tr("Imported %1 conversation(s) with %2 message(s), %3 prompt(s) (%4 already here).")
                              .arg(r.conversations)
                              .arg(r.messages)
                              .arg(r.prompts)
                              .arg(r.prompts_reused);
        for (const auto& [from, to] : r.renamed_prompts) {
          message += QObject::tr(" \"%1\" differs from the prompt of that name here: imported as \"%2\".")
                         .arg(QString::fromStdString(from), QString::fromStdString(to));
        }
        return message;
      },
      [done](QString message) { done(message); });
}

void add_export_menu(QMenu* file, QWidget* window, StorageService* storage, ChatController* controller,
                     Banner* banner) {
  const auto report = [banner](const QString& message) { banner->showNotice(message, {}, {}, 8000); };
  const auto conversation = [=](ExportFormat format) {
    const qint64 id = controller->currentConversation();
    if (id == 0) return banner->showError(QObject::tr("Open a conversation to export it."));
    const bool md = format == ExportFormat::kMarkdown;
    const QString path = QFileDialog::getSaveFileName(
        window, QObject::tr("Export the conversation"),
        QDir::home().filePath(QStringLiteral("conversation-%1.%2").arg(id).arg(md ? "md" : "json")),
        md ? QObject::tr("Markdown (*.md)") : QObject::tr("JSON (*.json)"));
    if (!path.isEmpty()) export_to_file(storage, window, id, format, path, report);
  };
  QMenu* menu = file->addMenu(QObject::tr("&Export"));
  menu->setObjectName(QStringLiteral("exportMenu"));
  menu->addAction(QObject::tr("Conversation as &Markdown\u2026"), window,
                  [=] { conversation(ExportFormat::kMarkdown); });
  menu->addAction(QObject::tr("Conversation as &JSON\u2026"), window, [=] { conversation(ExportFormat::kJson); });
  menu->addAction(QObject::tr("&Everything as JSON\u2026"), window, [=] {
    const QString path = QFileDialog::getSaveFileName(window, QObject::tr("Export everything"),
                                                      QDir::home().filePath(QStringLiteral("hearth-export.json")),
                                                      QObject::tr("JSON (*.json)"));
    if (!path.isEmpty()) export_to_file(storage, window, 0, ExportFormat::kJson, path, report);
  });
  file->addAction(QObject::tr("&Import\u2026"), window, [=] {
    const QString path = QFileDialog::getOpenFileName(window, QObject::tr("Import conversations and prompts"),
                                                      QDir::homePath(), QObject::tr("Hearth export (*.json)"));
    if (path.isEmpty()) return;
    import_from_file(storage, window, path, [=](const QString& message) {
      report(message);
      controller->reloadConversations();
    });
  });
}

}  // namespace hearth::app
