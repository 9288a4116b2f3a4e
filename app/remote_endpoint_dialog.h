// "Remote endpoint": the base URL of an OpenAI-compatible server (vLLM,
// llama.cpp's server, Ollama, hearth-server), its API key if it needs one,
// and the model, picked from the list its /models gives ("List models"
// asks it off the UI thread) or typed. The key is kept only in memory (the
// dialog says so); left empty, $HEARTH_API_KEY is used when it is set.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QStringList>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace hearth::app {

class EngineBridge;

class RemoteEndpointDialog : public QDialog {
  Q_OBJECT

 public:
  explicit RemoteEndpointDialog(QWidget* parent = nullptr, const QString& url = {}, const QString& model = {});

  QString url() const;
  QString apiKey() const;  // the key typed, else $HEARTH_API_KEY, else ""
  QString model() const;   // "" : the endpoint's only model

 public slots:
  void listModels();

 signals:
  void modelsListed(const QStringList& ids);  // after a successful "List models" (tests wait on it)

 private:
  struct Listed {
    QStringList ids;
    QString error;
  };
  void showListed(const Listed& listed);

  QLineEdit* url_ = nullptr;
  QLineEdit* key_ = nullptr;
  QComboBox* model_ = nullptr;
  QPushButton* list_ = nullptr;
  QLabel* status_ = nullptr;
  QFutureWatcher<Listed> watcher_;
};

// The API key to use when none was typed: $HEARTH_API_KEY (trimmed), else "".
QString environment_api_key();

// Asks for an endpoint (pre-filled with the remote model in use, else with
// `last_url` and `last_model`: the settings' last endpoint) and hands it to
// the bridge; the bridge's load signals report the outcome.
void ask_for_remote_endpoint(QWidget* parent, EngineBridge& bridge, const QString& last_url = {},
                             const QString& last_model = {});

}  // namespace hearth::app
