#include "app/banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QTimer>
#include <QToolButton>

namespace hearth::app {

Banner::Banner(QWidget* parent) : QFrame(parent) {
  setObjectName(QStringLiteral("banner"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(10, 4, 4, 4);
  text_ = new QLabel(this);
  text_->setObjectName(QStringLiteral("bannerText"));
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  connect(text_, &QLabel::linkActivated, this, [this](const QString& href) {
    if (on_link_) on_link_(href);
  });
  layout->addWidget(text_, 1);
  action_ = new QPushButton(this);
  action_->setObjectName(QStringLiteral("bannerAction"));
  layout->addWidget(action_);
  auto* close = new QToolButton(this);
  close->setObjectName(QStringLiteral("bannerClose"));
  close->setText(QStringLiteral("\u2715"));
  close->setAutoRaise(true);
  close->setToolTip(tr("Dismiss"));
  layout->addWidget(close);
  hide_timer_ = new QTimer(this);
  hide_timer_->setSingleShot(true);
  connect(hide_timer_, &QTimer::timeout, this, &QWidget::hide);
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  connect(action_, &QPushButton::clicked, this, [this] {
    hide();
    if (auto f = std::exchange(on_action_, nullptr)) f();
  });
  hide();
}

void Banner::present(const QString& kind, const QString& message, Qt::TextFormat format) {
  setProperty("kind", kind);
  style()->unpolish(this);
  style()->polish(this);
  if (format == Qt::PlainText) on_link_ = nullptr;
  text_->setTextFormat(format);  // a message naming a file or an error is never read as HTML
  text_->setText(message);
  show();
}

void Banner::showLinks(const QString& html, std::function<void(const QString&)> on_link) {
  hide_timer_->stop();
  on_action_ = nullptr;
  action_->hide();
  present(QStringLiteral("info"), html, Qt::RichText);
  on_link_ = std::move(on_link);
}

void Banner::showError(const QString& message) {
  hide_timer_->stop();
  on_action_ = nullptr;
  action_->hide();
  present(QStringLiteral("error"), message);
}

void Banner::showNotice(const QString& message, const QString& action, std::function<void()> on_action,
                        int timeout_ms) {
  on_action_ = std::move(on_action);
  action_->setText(action);
  action_->setVisible(!action.isEmpty());
  present(QStringLiteral("info"), message);
  hide_timer_->start(timeout_ms);
}

bool Banner::showingError() const {
  return isVisible() && property("kind").toString() == QLatin1String("error");
}

void Banner::clearError() {
  if (property("kind").toString() == QLatin1String("error")) hide();
}

QString Banner::text() const {
  return text_->text();
}

}  // namespace hearth::app
