// "Serve": a toggle in the model bar that serves the loaded model over the
// OpenAI API (EngineBridge::serve: hearth-server's routes on the app's own
// engine), and the URL it is served on, selectable for copying. It follows
// the bridge: off when the model goes, disabled without a local model.
#pragma once

#include <QWidget>

#include "app/model_server.h"

class QLabel;
class QToolButton;

namespace hearth::app {

class EngineBridge;

class ServeToggle : public QWidget {
  Q_OBJECT

 public:
  explicit ServeToggle(EngineBridge& bridge, QWidget* parent = nullptr);
  void setOptions(const ServeOptions& options) { options_ = options; }  // tests: port 0

 signals:
  void failed(const QString& message);  // could not serve, or serving stopped by itself

 private:
  void showServing(const QString& url, const QString& error);
  void followModel();

  EngineBridge& bridge_;
  ServeOptions options_;
  QToolButton* button_ = nullptr;
  QLabel* url_ = nullptr;
};

}  // namespace hearth::app
