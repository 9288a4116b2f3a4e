#include "app/remote_endpoint_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/engine_bridge.h"
#ifdef HEARTH_APP_HAVE_REMOTE
#include "conversation/remote/remote_engine.h"
#endif

namespace hearth::app {

RemoteEndpointDialog::RemoteEndpointDialog(QWidget* parent, const QString& url, const QString& model)
    : QDialog(parent) {
  setObjectName(QStringLiteral("remoteEndpointDialog"));
  setWindowTitle(tr("Remote endpoint"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("An OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, hearth-server) "
                              "answers in place of a local model. Conversations, prompts and history stay here."),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  url_ = new QLineEdit(url, this);
  url_->setObjectName(QStringLiteral("remoteUrl"));
  url_->setPlaceholderText(QStringLiteral("http://gpu-server:8000/v1"));
  form->addRow(tr("Base URL"), url_);
  key_ = new QLineEdit(this);
  key_->setObjectName(QStringLiteral("remoteKey"));
  key_->setEchoMode(QLineEdit::Password);
  const bool from_environment = !environment_api_key().isEmpty();
  key_->setPlaceholderText(from_environment ? tr("from $HEARTH_API_KEY") : tr("none"));
  form->addRow(tr("API key"), key_);
  auto* key_note = new QLabel(tr("The key is never saved: Hearth asks for it again after a restart, or uses "
                                 "$HEARTH_API_KEY when it is set. The URL and model are remembered."),
                              this);
  key_note->setObjectName(QStringLiteral("remoteKeyNote"));
  key_note->setWordWrap(true);
  key_note->setProperty("muted", true);
  form->addRow(QString(), key_note);
  model_ = new QComboBox(this);
  model_->setObjectName(QStringLiteral("remoteModel"));
  model_->setEditable(true);
  model_->setCurrentText(model);
  model_->lineEdit()->setPlaceholderText(tr("the endpoint's only model"));
  list_ = new QPushButton(tr("List models"), this);
  list_->setObjectName(QStringLiteral("remoteList"));
  auto* model_row = new QHBoxLayout;
  model_row->addWidget(model_, 1);
  model_row->addWidget(list_);
  form->addRow(tr("Model"), model_row);
  layout->addLayout(form);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("remoteStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(status_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Use"));
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(list_, &QPushButton::clicked, this, &RemoteEndpointDialog::listModels);
  connect(&watcher_, &QFutureWatcher<Listed>::finished, this, [this] { showListed(watcher_.result()); });
}

QString RemoteEndpointDialog::url() const {
  return url_->text().trimmed();
}

QString RemoteEndpointDialog::apiKey() const {
  const QString typed = key_->text().trimmed();
  return typed.isEmpty() ? environment_api_key() : typed;
}

QString environment_api_key() {
  return qEnvironmentVariable("HEARTH_API_KEY").trimmed();
}

QString RemoteEndpointDialog::model() const {
  return model_->currentText().trimmed();
}

void RemoteEndpointDialog::listModels() {
  if (watcher_.isRunning()) return;
  list_->setEnabled(false);
  status_->setText(tr("Asking %1 for its models\u2026").arg(url()));
  const std::string url_text = url().toStdString(), key = apiKey().toStdString();
  watcher_.setFuture(QtConcurrent::run([url_text, key]() -> Listed {
    Listed out;
#ifdef HEARTH_APP_HAVE_REMOTE
    auto endpoint = remote::parse_endpoint(url_text, key);
    if (!endpoint) return {{}, QString::fromStdString(endpoint.error().message)};
    auto ids = remote::list_models(*endpoint);
    if (!ids) return {{}, QString::fromStdString(ids.error().message)};
    for (const auto& id : *ids) out.ids << QString::fromStdString(id);
#else
    out.error = QObject::tr("This build of Hearth has no remote endpoints (built without cpp-httplib).");
#endif
    return out;
  }));
}

void RemoteEndpointDialog::showListed(const Listed& listed) {
  list_->setEnabled(true);
  if (!listed.error.isEmpty()) {
    status_->setText(listed.error);
    return;
  }
  const QString keep = model();
  model_->clear();
  model_->addItems(listed.ids);
  if (!keep.isEmpty() && listed.ids.contains(keep)) model_->setCurrentText(keep);
  status_->setText(tr("%n model(s) served.", nullptr, static_cast<int>(listed.ids.size())));
  emit modelsListed(listed.ids);
}

void ask_for_remote_endpoint(QWidget* parent, EngineBridge& bridge, const QString& last_url,
                             const QString& last_model) {
  QString url = last_url, model = last_model;
  if (const auto& m = bridge.model(); m && !m->endpoint.isEmpty()) {
    url = m->endpoint;
    model = m->name;
  }
  RemoteEndpointDialog dialog(parent, url, model);
  if (dialog.exec() != QDialog::Accepted || dialog.url().isEmpty()) return;
  bridge.connectRemote(dialog.url(), dialog.apiKey(), dialog.model());
}

}  // namespace hearth::app
