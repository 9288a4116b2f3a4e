#include "app/storage_service.h"

#include <QDir>
#include <QStandardPaths>

#include "engine/core/log.h"

namespace hearth::app {

QString default_database_path() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  QDir().mkpath(dir);
  return QDir(dir).filePath(QStringLiteral("hearth.db"));
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
  const QString message = tr("Database error while %1: %2").arg(what, QString::fromStdString(e.describe()));
  log::get("app")->error("{}", message.toStdString());
  QMetaObject::invokeMethod(
      this, [this, message] { emit error(message); }, Qt::QueuedConnection);
}

}  // namespace hearth::app
