// The log panel's lines. A spdlog sink (make_log_sink) formats each message on
// the logging thread and hands it to the model through a queued call, so any
// thread may log and only the UI thread touches the model.
#pragma once

#include <QAbstractListModel>
#include <QStringList>

#include <spdlog/sinks/sink.h>

namespace hearth::app {

class LogModel : public QAbstractListModel {
  Q_OBJECT

 public:
  static constexpr int kMaxLines = 2000;  // the oldest lines go first
  enum Roles { kLevelRole = Qt::UserRole + 1 };

  explicit LogModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 public slots:
  void appendLine(const QString& line, int level);  // level: spdlog::level::level_enum

 private:
  struct Line {
    QString text;
    int level = 0;
  };
  std::vector<Line> lines_;  // kept below kMaxLines by dropping a block at a time
};

// A sink forwarding to `model` (queued); it holds the model by QPointer, so
// messages logged after the model is gone are dropped.
spdlog::sink_ptr make_log_sink(LogModel* model);

}  // namespace hearth::app
