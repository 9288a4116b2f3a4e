#include "app/engine_bridge.h"

#include "app/engine_worker.h"

namespace hearth::app {

void register_engine_metatypes() {
  qRegisterMetaType<LoadedModel>();
  qRegisterMetaType<ChosenDefaults>();
  qRegisterMetaType<GenerationRequest>();
  qRegisterMetaType<GenerationDone>();
  qRegisterMetaType<TokenCountRequest>();
  qRegisterMetaType<StatsSample>();
  qRegisterMetaType<ProfileUpdate>();
  qRegisterMetaType<OverflowFinding>();
}

EngineBridge::EngineBridge(QObject* parent) : ChatBackend(parent), worker_(new EngineWorker) {
  register_engine_metatypes();
  thread_.setObjectName(QStringLiteral("hearth-engine-bridge"));
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::started, worker_, &EngineWorker::start);
  connect(worker_, &EngineWorker::loadStarted, this, [this](const QString& path) {
    loading_ = true;
    emit loadStarted(path);
  });
  connect(worker_, &EngineWorker::defaultsChosen, this, &EngineBridge::defaultsChosen);
  connect(worker_, &EngineWorker::modelLoaded, this, [this](const LoadedModel& model) {
    loading_ = false;
    model_ = model;
    emit modelLoaded(model);
  });
  connect(worker_, &EngineWorker::loadFailed, this, [this](const QString& path, const QString& message) {
    loading_ = false;  // the model stays: modelUnloaded() follows if it went
    emit loadFailed(path, message);
  });
  connect(worker_, &EngineWorker::modelUnloaded, this, [this] {
    model_.reset();
    emit modelUnloaded();
  });
  connect(worker_, &EngineWorker::tokens, this, &EngineBridge::tokens);
  connect(worker_, &EngineWorker::finished, this, &EngineBridge::finished);
  connect(worker_, &EngineWorker::tokensCounted, this, &EngineBridge::tokensCounted);
  connect(worker_, &EngineWorker::statsUpdated, this, &EngineBridge::statsUpdated);
  connect(worker_, &EngineWorker::servingChanged, this, [this](const QString& url, const QString& error) {
    served_url_ = url;
    emit servingChanged(url, error);
  });
  connect(worker_, &EngineWorker::profileUpdated, this, &EngineBridge::profileUpdated);
  connect(worker_, &EngineWorker::overflowFound, this, &EngineBridge::overflowFound);
  thread_.start();
}

EngineBridge::~EngineBridge() {
  QMetaObject::invokeMethod(worker_, &EngineWorker::shutdown, Qt::BlockingQueuedConnection);
  thread_.quit();
  thread_.wait();
  delete worker_;  // its thread has stopped and it holds no timers or engine any more
}

void EngineBridge::loadModel(const QString& path_or_name, const models::RunConfig& config) {
  loading_ = true;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, path_or_name, config] { w->loadModel(path_or_name, config); }, Qt::QueuedConnection);
}

void EngineBridge::loadModelChoosingDefaults(const QString& path_or_name, const models::RunConfig& config) {
  loading_ = true;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, path_or_name, config] { w->loadModelChoosingDefaults(path_or_name, config); },
      Qt::QueuedConnection);
}

void EngineBridge::connectRemote(const QString& url, const QString& api_key, const QString& model) {
  loading_ = true;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, url, api_key, model] { w->connectRemote(url, api_key, model); }, Qt::QueuedConnection);
}

void EngineBridge::serve(bool on, const ServeOptions& options) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, on, options] { w->serve(on, options); }, Qt::QueuedConnection);
}

void EngineBridge::unloadModel() {
  QMetaObject::invokeMethod(worker_, &EngineWorker::unloadModel, Qt::QueuedConnection);
}

void EngineBridge::generate(const GenerationRequest& request) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request] { w->generate(request); }, Qt::QueuedConnection);
}

void EngineBridge::setProfiling(bool on) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, on] { w->setProfiling(on); }, Qt::QueuedConnection);
}

void EngineBridge::setOverflowCheck(bool on) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, on] { w->setOverflowCheck(on); }, Qt::QueuedConnection);
}

void EngineBridge::cancel(qint64 tag) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, tag] { w->cancel(tag); }, Qt::QueuedConnection);
}

void EngineBridge::countTokens(const TokenCountRequest& request) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request] { w->countTokens(request); }, Qt::QueuedConnection);
}

}  // namespace hearth::app
