#include "app/log_model.h"

#include <QBrush>
#include <QColor>
#include <QPointer>

#include <spdlog/sinks/base_sink.h>

#include <mutex>

namespace hearth::app {
namespace {

class QtForwardingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit QtForwardingSink(LogModel* model) : model_(model) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    QString line = QString::fromUtf8(formatted.data(), static_cast<qsizetype>(formatted.size())).trimmed();
    const int level = static_cast<int>(msg.level);
    QPointer<LogModel> model = model_;
    if (!model) return;
    QMetaObject::invokeMethod(
        model.data(),
        [model, line, level] {
          if (model) model->appendLine(line, level);
        },
        Qt::QueuedConnection);
  }
  void flush_() override {}

 private:
  QPointer<LogModel> model_;
};

}  // namespace

LogModel::LogModel(QObject* parent) : QAbstractListModel(parent) {}

int LogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(lines_.size());
}

QVariant LogModel::data(const QModelIndex& index, int role) const {
  if (index.row() < 0 || index.row() >= rowCount()) return {};
  const Line& line = lines_[static_cast<std::size_t>(index.row())];
  if (role == Qt::DisplayRole) return line.text;
  if (role == kLevelRole) return line.level;
  if (role == Qt::ForegroundRole && line.level >= spdlog::level::err) return QBrush(QColor(0xd0, 0x40, 0x40));
  if (role == Qt::ForegroundRole && line.level == spdlog::level::warn) return QBrush(QColor(0xc0, 0x80, 0x20));
  return {};
}

void LogModel::appendLine(const QString& line, int level) {
  if (static_cast<int>(lines_.size()) >= kMaxLines) {
    const int drop = kMaxLines / 4;  // one reset per 500 lines, not one per line
    beginRemoveRows({}, 0, drop - 1);
    lines_.erase(lines_.begin(), lines_.begin() + drop);
    endRemoveRows();
  }
  const int row = rowCount();
  beginInsertRows({}, row, row);
  lines_.push_back({line, level});
  endInsertRows();
}

spdlog::sink_ptr make_log_sink(LogModel* model) {
  auto sink = std::make_shared<QtForwardingSink>(model);
  sink->set_pattern("%H:%M:%S.%e %^%l%$ [%n] %v");
  return sink;
}

}  // namespace hearth::app
