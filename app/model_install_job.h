// One model install off the UI thread (models::install on a pool thread),
// reporting progress and the outcome through queued calls on this object's
// thread. Destroying the job cancels a running install and waits for it.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>

#include <atomic>

#include "models/catalog.h"
#include "models/install/install_progress.h"

namespace hearth::app {

class ModelInstallJob : public QObject {
  Q_OBJECT

 public:
  explicit ModelInstallJob(QObject* parent = nullptr);
  ~ModelInstallJob() override;

  bool running() const { return running_; }
  QString name() const { return name_; }
  void start(const models::CatalogEntry& entry);  // ignored while one runs
  void cancel();                                  // the install ends with a "cancelled" failure

 signals:
  void progressed(const hearth::models::install::InstallProgress& progress);
  // ok: the model is at `path`; otherwise `message` says what failed.
  void finished(const QString& name, bool ok, const QString& path, const QString& message);

 private:
  std::atomic<bool> cancel_{false};
  QFuture<void> future_;
  QString name_;
  bool running_ = false;
};

}  // namespace hearth::app
