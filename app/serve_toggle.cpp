#include "app/serve_toggle.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QToolButton>

#include "app/engine_bridge.h"

namespace hearth::app {

ServeToggle::ServeToggle(EngineBridge& bridge, QWidget* parent) : QWidget(parent), bridge_(bridge) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  button_ = new QToolButton(this);
  button_->setObjectName(QStringLiteral("serveButton"));
  button_->setText(tr("Serve"));
  button_->setCheckable(true);
  button_->setToolTip(tr("Serve the loaded model to other programs over an OpenAI-compatible API on this machine"));
  layout->addWidget(button_);
  url_ = new QLabel(this);
  url_->setObjectName(QStringLiteral("serveUrl"));
  url_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  url_->setToolTip(tr("Base URL for OpenAI clients (loopback only)"));
  layout->addWidget(url_);
  url_->hide();
  connect(button_, &QToolButton::toggled, this, [this](bool on) { bridge_.serve(on, options_); });
  connect(&bridge_, &EngineBridge::servingChanged, this, &ServeToggle::showServing);
  connect(&bridge_, &EngineBridge::modelLoaded, this, &ServeToggle::followModel);
  connect(&bridge_, &EngineBridge::modelUnloaded, this, &ServeToggle::followModel);
  followModel();
}

void ServeToggle::showServing(const QString& url, const QString& error) {
  const QSignalBlocker quiet(button_);
  button_->setChecked(!url.isEmpty());
  url_->setText(url);
  url_->setVisible(!url.isEmpty());
  if (!error.isEmpty()) emit failed(tr("Serving stopped: %1").arg(error));
}

void ServeToggle::followModel() {
  const auto& m = bridge_.model();
  button_->setEnabled(m && m->endpoint.isEmpty());
}

}  // namespace hearth::app
