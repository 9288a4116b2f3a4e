// The small form that asks for a prompt's {{variables}} when a send needs
// them (ChatController::variablesNeeded): one field per variable, filled
// with the values the conversation used last. Send passes the values on
// (sendWithVariables: they are recorded with the generation); Cancel gives
// the text back to the input box.
#pragma once

#include <QDialog>
#include <QVariantMap>

#include <map>
#include <string>

class QFormLayout;
class QLineEdit;

namespace hearth::app {

class ChatController;

class VariablesForm : public QDialog {
  Q_OBJECT

 public:
  VariablesForm(const QString& prompt, const QStringList& names, const QVariantMap& remembered,
                QWidget* parent = nullptr);

  QLineEdit* field(const QString& name) const;
  std::map<std::string, std::string> values() const;

 private:
  std::map<QString, QLineEdit*> fields_;
};

// Shows the form for a held send and routes its answer to the controller.
void ask_for_variables(QWidget* parent, ChatController* controller, const QString& text, const QString& prompt,
                       const QStringList& names, const QVariantMap& remembered);

}  // namespace hearth::app
