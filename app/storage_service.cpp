#include "app/storage_service.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "engine/core/log.h"
#include "settings/settings.h"

namespace hearth::app {

// The same file as hearth-cli's default (settings::default_database_path):
// the app and the command line share conversations, prompts and history.
QString default_database_path() {
  const auto shared = settings::default_database_path();
  const QString path = shared ? QString::fromStdString(shared->string())
                              : QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                                    .filePath(QStringLiteral("hearth.db"));
  QDir().mkpath(QFileInfo(path).absolutePath());
  return path;
}

StorageService::StorageService(const QString& db_path, QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  pool_.setExpiryTimeout(-1);  // keep the one thread: SQLite work stays on it
  post([this, path = db_path.toStdString()] {
    store::StoreOptions options;
    options.path = path;
    auto opened_store = store::Store::open(options);
    if (!opened_store) return fail(tr("opening the conversation database"), opened_store.error());
    store_ = std::move(opened_store).value();
    const int recovered = store_->recovered_messages();
    QString read_only;
    if (store_->writer_elsewhere()) {
      const QString pid = store_->writer_pid() ? tr(" (process %1)").arg(*store_->writer_pid()) : QString();
      read_only = tr("Another Hearth%1 is using this conversation database, so this window is read-only: new messages "
                     "cannot be saved here. Close the other one, then restart Hearth.")
                      .arg(pid);
    } else if (store_->read_only()) {
      read_only = tr("The conversation database %1 is read-only: new messages cannot be saved.")
                      .arg(QString::fromStdString(path));
    }
    QMetaObject::invokeMethod(
        this,
        [this, recovered, read_only] {
          emit opened(recovered);
          if (!read_only.isEmpty()) emit readOnlyDatabase(read_only);
        },
        Qt::QueuedConnection);
  });
}

StorageService::~StorageService() {
  pool_.waitForDone();
  store_.reset();
}

void StorageService::waitForIdle() {
  pool_.waitForDone();
}

void StorageService::fail(const QString& what, const store::StoreError& e) {
  // A refused request (a prompt variable without a value, a bad sampling
  // value) is not the database's fault: say what was refused, not "Database error".
  const QString message = e.code == store::StoreErrorCode::kInvalidArgument
                              ? tr("Could not finish %1: %2").arg(what, QString::fromStdString(e.message))
                              : tr("Database error while %1: %2").arg(what, QString::fromStdString(e.describe()));
  log::get("app")->error("{}", message.toStdString());
  QMetaObject::invokeMethod(
      this, [this, message] { emit error(message); }, Qt::QueuedConnection);
}

}  // namespace hearth::app
