#include "app/model_install_job.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include "models/install/installer.h"

namespace hearth::app {

ModelInstallJob::ModelInstallJob(QObject* parent) : QObject(parent) {}

ModelInstallJob::~ModelInstallJob() {
  cancel_ = true;
  future_.waitForFinished();
}

void ModelInstallJob::start(const models::CatalogEntry& entry) {
  if (running_) return;
  running_ = true;
  cancel_ = false;
  name_ = QString::fromStdString(entry.name);
  future_ = QtConcurrent::run([this, entry] {
    models::install::InstallOptions options;
    options.cancel = &cancel_;
    options.on_progress = [this](const models::install::InstallProgress& p) {
      // Queued to this object's thread; dropped if the object is gone by then.
      QMetaObject::invokeMethod(
          this, [this, p] { emit progressed(p); }, Qt::QueuedConnection);
    };
    auto result = models::install::install_model(entry, options);
    const bool ok = result.ok();
    const QString path = ok ? QString::fromStdString(result->path.string()) : QString();
    const QString message = ok ? QString() : QString::fromStdString(result.error().message);
    QMetaObject::invokeMethod(
        this,
        [this, ok, path, message] {
          running_ = false;
          emit finished(name_, ok, path, message);
        },
        Qt::QueuedConnection);
  });
}

void ModelInstallJob::cancel() {
  cancel_ = true;
}

}  // namespace hearth::app
