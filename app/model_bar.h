// The model bar above the chat: which model (installed models from the models
// folder, or any GGUF through a file dialog), Load / Unload with a busy
// indicator, and what the loaded model is: device, quantization, context use.
#pragma once

#include <QWidget>

#include "app/engine_types.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QToolButton;

namespace hearth::app {

class ModelBar : public QWidget {
  Q_OBJECT

 public:
  explicit ModelBar(QWidget* parent = nullptr);

  void refreshInstalled();  // re-reads models::installed_models()
  QString selectedPath() const;
  void selectPath(const QString& path);  // adds it to the list when missing

 public slots:
  void openFileDialog();
  void setLoading(const QString& path);
  void setLoaded(const hearth::app::LoadedModel& model);
  void setUnloaded();
  void setContextUsed(int used_tokens);

 signals:
  void loadRequested(const QString& path);
  void unloadRequested();

 private:
  void showContext();

  QComboBox* models_ = nullptr;
  QToolButton* open_ = nullptr;
  QPushButton* load_ = nullptr;
  QPushButton* unload_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* device_ = nullptr;
  QLabel* quant_ = nullptr;
  QLabel* context_ = nullptr;
  int context_length_ = 0;
  int context_used_ = 0;
};

QString format_bytes(std::int64_t bytes);

}  // namespace hearth::app
