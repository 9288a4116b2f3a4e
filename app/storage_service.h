// Every access to the conversation store runs here, on one storage thread, in
// the order it was asked for; results come back to the UI thread through
// queued calls. So the UI never waits on SQLite (writes are fsync'ed), and a
// read posted after a write sees it. Writes that change what the conversation
// list shows go through write(), which announces them (conversationsChanged)
// so the view models that show conversations reload themselves: nobody
// refreshes them by hand after a write.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <string>

#include "store/store.h"

namespace hearth::app {

class StorageService : public QObject {
  Q_OBJECT

 public:
  // Opens (creating and migrating) the database at `db_path` on the storage thread.
  explicit StorageService(const QString& db_path, QObject* parent = nullptr);
  ~StorageService() override;  // finishes the writes already queued

  // Runs `work(store)` on the storage thread. On success `done(value)` runs on
  // the UI thread while `context` lives; a failure is emitted as error().
  // `work` returns a store::StoreResult<T>.
  template <class Work, class Done>
  void run(QObject* context, QString what, Work work, Done done);
  // The same, for work whose result nobody waits on (StoreResult<void>).
  template <class Work>
  void run(QString what, Work work);

  // run() for a write that changes the conversation list (a conversation
  // created, renamed, deleted, restored, or with new activity): after it
  // succeeds, conversationsChanged() is emitted on the UI thread, before `done`.
  template <class Work, class Done>
  void write(QObject* context, QString what, Work work, Done done);
  template <class Work>
  void write(QString what, Work work);

  // Blocks until every queued job has run (tests, shutdown).
  void waitForIdle();

 signals:
  void opened(int recovered_messages);
  // Emitted after opened() when nothing can be saved: another Hearth holds the
  // database's writer lock, or the file is read-only. Says which, for a banner.
  void readOnlyDatabase(const QString& reason);
  void error(const QString& message);
  void conversationsChanged();  // a write() succeeded: the list of conversations (or their order) changed

 private:
  void post(std::function<void()> job) { pool_.start(std::move(job)); }
  template <class Work, class Done>
  void job(QObject* context, QString what, Work work, Done done, bool announce);
  void fail(const QString& what, const store::StoreError& e);

  QThreadPool pool_;                     // one thread: jobs run in order
  std::shared_ptr<store::Store> store_;  // set by the first job; null when opening failed
};

template <class Work, class Done>
void StorageService::job(QObject* context, QString what, Work work, Done done, bool announce) {
  post([this, ctx = QPointer<QObject>(context), what, work, done, announce]() mutable {
    if (!store_) return fail(what, store::make_store_error(store::StoreErrorCode::kIo, "the database is not open"));
    auto result = work(*store_);
    if (!result) return fail(what, result.error());
    auto value = std::make_shared<std::decay_t<decltype(result.value())>>(std::move(result).value());
    QMetaObject::invokeMethod(
        this,
        [this, ctx, done, value, announce]() mutable {
          if (announce) emit conversationsChanged();
          if (ctx) done(std::move(*value));
        },
        Qt::QueuedConnection);
  });
}

template <class Work, class Done>
void StorageService::run(QObject* context, QString what, Work work, Done done) {
  job(context, std::move(what), std::move(work), std::move(done), false);
}

template <class Work, class Done>
void StorageService::write(QObject* context, QString what, Work work, Done done) {
  job(context, std::move(what), std::move(work), std::move(done), true);
}

template <class Work>
void StorageService::run(QString what, Work work) {
  post([this, what, work]() mutable {
    if (!store_) return fail(what, store::make_store_error(store::StoreErrorCode::kIo, "the database is not open"));
    auto result = work(*store_);
    if (!result) fail(what, result.error());
  });
}

template <class Work>
void StorageService::write(QString what, Work work) {
  post([this, what, work]() mutable {
    if (!store_) return fail(what, store::make_store_error(store::StoreErrorCode::kIo, "the database is not open"));
    auto result = work(*store_);
    if (!result) return fail(what, result.error());
    QMetaObject::invokeMethod(
        this, [this] { emit conversationsChanged(); }, Qt::QueuedConnection);
  });
}

// Where the app keeps its database: settings::default_database_path(), the
// same file hearth-cli uses by default (its folder is created).
QString default_database_path();

}  // namespace hearth::app
